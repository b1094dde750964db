/**
 * A/B: CPU time per request of several builds of the service (and the floor), each
 * measured ALONE: one server process at a time, started fresh, warmed up, loaded,
 * stopped; the builds take turns, round after round. The median per build is printed,
 * with the medians of its runs' p50 and p99 latency (as the load generator saw them), and
 * its best run: a neighbour on a shared machine only ever adds CPU time, so the best of
 * many runs is the steadiest estimate of a build's own cost when the medians swing.
 *
 * Each build runs on a store of its own, created by that build's own CLI and seeded
 * alike, so builds on either side of a migration compare (an older build refuses a
 * store a newer one has migrated).
 *
 * Why one at a time: with every build up at once on one SQLite file, the same build
 * measured 29.3 µs per request alone and 36.7 beside four others (bench/README.md);
 * single changes are a few µs. CPU µs per request from /proc is also steadier than
 * req/s on a shared box, so that is what is compared.
 *
 * Usage:
 *   npm run build && cp -r dist /tmp/before      # then change the code and rebuild
 *   node --import tsx bench/ab.ts --case get --rounds 4 /tmp/before dist 'dist:LOG_LEVEL=warn' floor
 *
 * A build is a directory holding a build of the service (like dist/), optionally
 * followed by `:NAME=value,...` environment for its process; `floor` is the bare-Fastify
 * floor server. `NODE_FLAGS=--flag --other=1` in a build's environment is taken as the
 * node flags to start it with instead of those of `npm start` (V8's flags cannot go
 * through NODE_OPTIONS), so two runtime settings of one build compare:
 * `dist 'dist:NODE_FLAGS=--max-semi-space-size=8 --heap-growing-percent=50'`.
 * `--rate <req/s>` offers a fixed load instead of running closed-loop.
 * `--store postgres` runs the builds on PostgreSQL (BENCH_POSTGRES_URL, as for
 * npm run bench) instead of a SQLite file.
 */
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { DEFAULT_POSTGRES_URL, type CaseName, type StoreName } from './options.js';
import { cpuMs, peakRss, runLoadProcess, startFloor, startService, stop, type Running } from './processes.js';
import { median } from './report.js';
import { prepareStore, type PreparedStore } from './stores.js';

interface Build {
  readonly label: string;
  readonly directory: string | 'floor';
  readonly env: Record<string, string>;
  /** Instead of npm start's. */
  readonly nodeFlags?: readonly string[];
}

function parseBuild(spec: string): Build {
  const colon = spec.indexOf(':');
  const directory = colon === -1 ? spec : spec.slice(0, colon);
  const env: Record<string, string> = {};
  if (colon !== -1) {
    for (const pair of spec
      .slice(colon + 1)
      .split(',')
      .filter(Boolean)) {
      const equals = pair.indexOf('=');
      if (equals < 1) throw new Error(`'${pair}' in '${spec}' is not NAME=value`);
      env[pair.slice(0, equals)] = pair.slice(equals + 1);
    }
  }
  const { NODE_FLAGS: flags, ...rest } = env;
  const nodeFlags = flags === undefined ? undefined : flags.split(' ').filter(Boolean);
  return {
    label: spec,
    directory: directory === 'floor' ? 'floor' : isAbsolute(directory) ? directory : join(process.cwd(), directory),
    env: rest,
    nodeFlags,
  };
}

function parseArguments(argv: readonly string[]) {
  let kase: CaseName = 'get';
  let store: StoreName = 'sqlite';
  let rounds = 4;
  let rate: number | undefined;
  let duration = 5;
  const builds: Build[] = [];
  for (let i = 0; i < argv.length; i += 1) {
    const argument = argv[i] as string;
    const value = () => {
      const next = argv[(i += 1)];
      if (next === undefined) throw new Error(`${argument} needs a value`);
      return next;
    };
    if (argument === '--case') kase = value() as CaseName;
    else if (argument === '--store') store = value() as StoreName;
    else if (argument === '--rounds') rounds = Number(value());
    else if (argument === '--rate') rate = Number(value());
    else if (argument === '--duration') duration = Number(value());
    else builds.push(parseBuild(argument));
  }
  if (!['create', 'update', 'get', 'list'].includes(kase))
    throw new Error(`--case must be create, update, get or list (got '${kase}')`);
  if (!['sqlite', 'postgres'].includes(store)) throw new Error(`--store must be sqlite or postgres (got '${store}')`);
  if (builds.length === 0) throw new Error('name at least one build directory (or floor)');
  return { kase, store, rounds, rate, duration, builds };
}

function startBuild(build: Build, databaseUrl: string): Promise<Running> {
  const logFile = join(tmpdir(), 'plantstore-ab.log');
  if (build.directory === 'floor') return startFloor(logFile);
  return startService({
    databaseUrl,
    logLevel: 'info',
    logFile,
    buildDir: build.directory,
    env: build.env,
    nodeFlags: build.nodeFlags,
  });
}

const { kase, store: storeName, rounds, rate, duration, builds } = parseArguments(process.argv.slice(2));
const stores = new Map<string, PreparedStore>();
for (const build of builds) {
  // The floor answers from memory: any build's token and size serve its load.
  if (build.directory === 'floor') continue;
  const prepared = await prepareStore(
    storeName,
    10_000,
    process.env.BENCH_POSTGRES_URL || DEFAULT_POSTGRES_URL,
    build.directory,
  );
  if ('skipped' in prepared) throw new Error(`${storeName}: ${prepared.skipped}`);
  stores.set(build.label, prepared);
}
if (stores.size === 0) {
  const prepared = await prepareStore(storeName, 10_000, process.env.BENCH_POSTGRES_URL || DEFAULT_POSTGRES_URL);
  if ('skipped' in prepared) throw new Error(`${storeName}: ${prepared.skipped}`);
  stores.set('', prepared);
}
const storeOf = (build: Build): PreparedStore =>
  stores.get(build.label) ?? (stores.values().next().value as PreparedStore);
interface Sample {
  readonly micros: number;
  readonly p50: number;
  readonly p99: number;
}
const perBuild = new Map<string, Sample[]>(builds.map((build) => [build.label, []]));
let run = 1;
try {
  for (let round = 1; round <= rounds; round += 1) {
    for (const build of builds) {
      const store = storeOf(build);
      const server = await startBuild(build, store.databaseUrl);
      const spec = { url: server.url, case: kase, token: store.token, storeSize: store.size, connections: 50, rate };
      await runLoadProcess({ ...spec, run: run++, duration: 1 }); // warm-up
      const before = cpuMs(server.child.pid as number);
      const result = await runLoadProcess({ ...spec, run: run++, duration });
      const micros = ((cpuMs(server.child.pid as number) - before) * 1000) / result.requests;
      const failures = Object.entries(result.statuses).filter(([status]) => status !== '200');
      if (failures.length > 0)
        console.log(`${build.label}: answers other than 200: ${JSON.stringify(Object.fromEntries(failures))}`);
      perBuild.get(build.label)?.push({ micros, p50: result.p50, p99: result.p99 });
      const rss = build.directory === 'floor' ? '' : `, peak RSS ${peakRss(server.child.pid as number).toFixed(0)} MB`;
      await stop(server);
      console.log(
        `round ${round}: ${build.label}: ${micros.toFixed(1)} µs/req at ${Math.round(result.rps)} req/s, p50 ${result.p50.toFixed(2)} p99 ${result.p99.toFixed(2)} ms${rss}`,
      );
    }
  }
} finally {
  for (const store of stores.values()) await store.cleanup();
}
console.log(
  `\n${kase} on ${storeName}, ${rate === undefined ? 'closed loop' : `${rate} req/s offered`}, 50 connections, ${duration} s per run, CPU µs per request (all threads), and latency in ms (medians over the runs):`,
);
for (const [label, samples] of perBuild) {
  const micros = samples.map((s) => s.micros);
  const latency = `p50 ${median(samples.map((s) => s.p50)).toFixed(2)}  p99 ${median(samples.map((s) => s.p99)).toFixed(2)}`;
  console.log(
    `  ${label.padEnd(48)} median ${median(micros).toFixed(1)}   best ${Math.min(...micros).toFixed(1)}   runs ${micros.map((m) => m.toFixed(1)).join(' ')}   ${latency}`,
  );
}
