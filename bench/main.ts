/**
 * `npm run bench`: the service against the floor (a bare Fastify server), on
 * every reachable store, with the same load generator, connections and duration.
 *
 * For each store: a fresh store with a real token and --store-size seeded plants,
 * the service started from dist/ as `npm start` runs it (start-up timed, median of
 * several starts). For each case: a short warm-up of every server, then --repeats
 * rounds of measured runs, floor and service interleaved (so drift in the machine
 * hits all alike; create and update, which are compared, share their rounds), then
 * a run at a fixed offered load of half the service's measured maximum. Medians
 * are quoted.
 *
 * --scale also starts the service on a store of --scale-size (1,000,000) plants,
 * alongside the first, interleaves its runs with theirs, and compares create req/s
 * and get p99 between the two stores.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchBulk, floorBulk, formatBulk, writeImportFile, type BulkFigures } from './bulk.js';
import { probeFsync } from './fsync-probe.js';
import { probeMachine } from './machine-probe.js';
import type { LoadResult, LoadSpec } from './load-runner.js';
import { parseOptions, type BenchOptions, type CaseName, type StoreName } from './options.js';
import { cpuMs, peakRss, ROOT, runLoadProcess, startFloor, startService, stop, type Running } from './processes.js';
import { formatTable, median, summarise, writeResults, type Row } from './report.js';
import { prepareStore, type PreparedStore } from './stores.js';
import { benchFirstRun, formatFirstRun, type FirstRunFigures } from './first-run.js';
import { benchWebhooks, formatWebhooks, type WebhookFigures } from './webhooks.js';
import { benchMixed, formatMixed, mixedNotes, type MixedFigures } from './mixed.js';
import { benchStreams, benchStreamsFloor, formatStreams, streamNotes, type StreamFigures } from './streams.js';

const options = parseOptions(process.argv.slice(2), process.env);
const rows: Row[] = [];
const bulkRows: BulkFigures[] = [];
const streamRows: StreamFigures[] = [];
const mixedRows: MixedFigures[] = [];
let firstRun: FirstRunFigures | undefined;
const notes: string[] = [];
let runNumber = 0;
const STARTUP_SAMPLES = 5;
/** The servers' logs (the service logs every request, as in production); kept only if the bench fails. */
const logDir = mkdtempSync(join(tmpdir(), 'plantstore-bench-logs-'));

const log = (message: string) => process.stderr.write(`bench: ${message}\n`);

function build(): void {
  log('building (npm run build)');
  const result = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) throw new Error('npm run build failed');
}

async function load(server: Running, spec: Omit<LoadSpec, 'url' | 'run'>) {
  const pid = server.child.pid as number;
  const cpuBefore = cpuMs(pid);
  const measured = await runLoadProcess({ ...spec, url: server.url, run: runNumber++ });
  const result = { ...measured, cpuMicrosPerRequest: ((cpuMs(pid) - cpuBefore) * 1000) / measured.requests };
  const bad = Object.entries(result.statuses).filter(([status]) => status !== '200');
  if (bad.length > 0 || result.errors > 0) {
    notes.push(`${spec.case} on ${server.url}: statuses ${JSON.stringify(result.statuses)}, ${result.errors} errors`);
  }
  return result;
}

/** One service under test: a prepared store and the service running on it. */
interface Target {
  readonly prepared: PreparedStore;
  readonly service: Running;
}

/**
 * Cases whose figures are compared with each other (issue 19: update req/s against
 * create's) are measured in the same rounds, so a slow spell of this shared machine
 * hits both rather than one of them.
 */
const COMPARED_CASES: readonly (readonly CaseName[])[] = [['create', 'update']];

/** The cases in order, those compared with each other grouped. */
function caseGroups(cases: readonly CaseName[]): CaseName[][] {
  const groups: CaseName[][] = [];
  for (const kase of cases) {
    if (groups.some((group) => group.includes(kase))) continue;
    const compared = COMPARED_CASES.find((group) => group.includes(kase));
    groups.push(compared === undefined ? [kase] : compared.filter((c) => cases.includes(c)));
  }
  return groups;
}

/**
 * Some cases on the floor and every target, all their runs interleaved (the order
 * rotates each round), so drift in the machine hits all of them alike.
 */
async function benchCases(cases: readonly CaseName[], targets: readonly Target[], floor: Running, o: BenchOptions) {
  const specFor = (kase: CaseName, { prepared }: Target) => ({
    case: kase,
    token: prepared.token,
    storeSize: prepared.size,
    connections: o.connections,
    duration: o.duration,
    deepNameCursor: prepared.deepNameCursor,
  });
  const first = targets[0] as Target;
  const entries = cases.flatMap((kase) => [
    { kase, server: floor, spec: specFor(kase, first) },
    ...targets.map((target) => ({ kase, server: target.service, spec: specFor(kase, target) })),
  ]);
  const name = `${cases.join(' and ')} on ${first.prepared.store}`;
  log(`${name}: warm-up`);
  for (const { server, spec } of entries) await load(server, { ...spec, duration: 1 });
  const runs: LoadResult[][] = entries.map(() => []);
  for (let i = 0; i < o.repeats; i++) {
    log(`${name}: round ${i + 1} of ${o.repeats}`);
    for (let k = 0; k < entries.length; k++) {
      const index = (i + k) % entries.length;
      const { server, spec } = entries[index] as (typeof entries)[number];
      (runs[index] as LoadResult[]).push(await load(server, spec));
    }
  }
  const fixedLoad = async (
    server: Running,
    spec: ReturnType<typeof specFor>,
    offered: number,
  ): Promise<Row['halfLoad']> => {
    const paced = await load(server, { ...spec, rate: offered });
    return { offered, achieved: paced.rps, p99: paced.p99, p50: paced.p50 };
  };
  const perCase = targets.length + 1;
  for (const [c, kase] of cases.entries()) {
    const caseRuns = (t: number) => runs[c * perCase + t] as LoadResult[];
    const floorRow = summarise(kase, 'floor', first.prepared.size, caseRuns(0));
    const serviceRows: Row[] = [];
    for (const [t, target] of targets.entries()) {
      const { store, size } = target.prepared;
      const row = summarise(kase, store, size, caseRuns(t + 1));
      let halfLoad: Row['halfLoad'];
      if (o.paced) {
        log(`${kase} on ${store} (${size} plants): fixed load of ${Math.round(row.rps / 2)} req/s`);
        halfLoad = await fixedLoad(target.service, specFor(kase, target), row.rps / 2);
      }
      serviceRows.push({
        ...row,
        ratio: row.rps / floorRow.rps,
        peakRssMb: peakRss(target.service.child.pid as number),
        halfLoad,
      });
    }
    // The floor at the first service's fixed load: the p99 this machine and load
    // generator give a server doing nothing, against which the service's p99 is read.
    let floorHalfLoad: Row['halfLoad'];
    const firstOffered = serviceRows[0]?.halfLoad?.offered;
    if (firstOffered !== undefined) {
      log(`${kase}: the floor at the same fixed load`);
      floorHalfLoad = await fixedLoad(floor, specFor(kase, first), firstOffered);
    }
    rows.push({ ...floorRow, halfLoad: floorHalfLoad }, ...serviceRows);
  }
}

/** Starts the service on a store; start-up is the median of STARTUP_SAMPLES starts, one alone is too noisy. */
async function startTarget(prepared: PreparedStore): Promise<Target> {
  const { store, size } = prepared;
  const profileDir = options.profile ? join(ROOT, 'bench', 'results', 'profiles') : undefined;
  const logFile = join(logDir, `service-${store}-${size}.log`);
  const startups: number[] = [];
  for (let i = 1; i < STARTUP_SAMPLES; i++) {
    const trial = await startService({ databaseUrl: prepared.databaseUrl, logLevel: options.logLevel, logFile });
    startups.push(trial.startupMs);
    await stop(trial);
  }
  const service = await startService({
    databaseUrl: prepared.databaseUrl,
    logLevel: options.logLevel,
    logFile,
    profileDir,
  });
  startups.push(service.startupMs);
  const runs = startups.map((ms) => Math.round(ms)).join(', ');
  notes.push(
    `${store}, ${size} plants: start-up to first answered request ${Math.round(median(startups))} ms (median of ${runs})`,
  );
  return { prepared, service };
}

/** Every case on one kind of store, at each of `sizes` (two in scale mode), all services up at once. */
async function benchStore(store: StoreName, sizes: readonly number[], floor: Running) {
  const targets: Target[] = [];
  try {
    for (const size of sizes) {
      log(`preparing ${store} with ${size} plants`);
      const prepared = await prepareStore(store, size, options.postgresUrl);
      if ('skipped' in prepared) {
        notes.push(`${store}: skipped: ${prepared.skipped}`);
        return;
      }
      notes.push(`${store}, ${size} plants: seeded in ${Math.round(prepared.seedMs)} ms`);
      try {
        targets.push(await startTarget(prepared));
      } catch (error) {
        await prepared.cleanup();
        throw error;
      }
    }
    for (const cases of caseGroups(options.cases)) await benchCases(cases, targets, floor, options);
  } finally {
    for (const { prepared, service } of targets) {
      await stop(service);
      await prepared.cleanup();
    }
  }
}

/**
 * Updates against creates on the same store (issue 19's target: at least 0.9x): the
 * median of each round's ratio, both cases measured in that round.
 */
function updateComparison(): void {
  for (const store of options.stores) {
    // A row's runs are in round order, so the i-th runs of the two cases shared a round.
    const at = (kase: CaseName) =>
      rows.find((r) => r.case === kase && r.store === store && r.plants === options.storeSize);
    const [create, update] = [at('create'), at('update')];
    if (create === undefined || update === undefined) continue;
    const ratios = create.runs.map((run, round) => (update.runs[round] as LoadResult).rps / run.rps);
    notes.push(
      `${store}: update req/s is ${median(ratios).toFixed(2)}x create's (median of ${ratios.length} rounds' ratios, ` +
        `${ratios.map((ratio) => ratio.toFixed(2)).join(', ')}; each round measures both)`,
    );
  }
}

/** Issue 20's targets: search and name-ordered pages within 1.5x of the id-ordered list page, the deep page within 1.2x
 * of the first, a tag count under 50 ms. */
function findComparison(): void {
  for (const store of options.stores) {
    const at = (kase: string) =>
      rows.find((r) => r.case === kase && r.store === store && r.plants === options.storeSize);
    const list = at('list');
    const ratio = (slow: Row | undefined, fast: Row | undefined) =>
      slow === undefined || fast === undefined ? undefined : fast.rps / slow.rps;
    const quote = (name: string, value: number | undefined) =>
      value === undefined ? [] : [`${name} ${value.toFixed(2)}x`];
    const parts = [
      ...quote('list/search', ratio(at('search'), list)),
      ...quote('list/search-common', ratio(at('search-common'), list)),
      ...quote('list/sort-name', ratio(at('sort-name'), list)),
      ...quote('list/sort-name-deep', ratio(at('sort-name-deep'), list)),
      ...quote('first/deep name page', ratio(at('sort-name-deep'), at('sort-name'))),
    ];
    if (parts.length > 0)
      notes.push(
        `${store}, ${options.storeSize} plants: req/s ratios (targets: list/search and list/sort-name <= 1.5, first/deep <= 1.2): ${parts.join(', ')}`,
      );
    const count = at('count-tag');
    if (count !== undefined)
      notes.push(
        `${store}, ${options.storeSize} plants: count of a tag (Prefer: count=exact) p50 ${count.p50.toFixed(1)} ms, p99 ${count.p99.toFixed(1)} ms (target < 50 ms)`,
      );
  }
}

function scaleComparison(): void {
  for (const store of options.stores) {
    const at = (kase: string, plants: number) =>
      rows.find((r) => r.case === kase && r.store === store && r.plants === plants);
    const [createSmall, createLarge] = [at('create', options.storeSize), at('create', options.scaleSize)];
    const [getSmall, getLarge] = [at('get', options.storeSize), at('get', options.scaleSize)];
    if (createSmall !== undefined && createLarge !== undefined) {
      notes.push(
        `${store} scale: create req/s with ${options.scaleSize} plants is ${(createLarge.rps / createSmall.rps).toFixed(2)}x that with ${options.storeSize}`,
      );
    }
    if (getSmall !== undefined && getLarge !== undefined) {
      notes.push(
        `${store} scale: get p99 with ${options.scaleSize} plants is ${(getLarge.p99 / getSmall.p99).toFixed(2)}x that with ${options.storeSize}`,
      );
    }
  }
}

/** The disk's durable-write latency: the floor under any durable create's latency here. */
function noteFsync(when: string): void {
  const { p50, p99, max } = probeFsync();
  notes.push(
    `fsync of a 4 KB write on this disk, ${when}: p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms, max ${max.toFixed(2)} ms`,
  );
}

/** This machine's speed now (machine-probe.ts): absolute figures compare across runs only with it alongside. */
async function noteMachine(when: string): Promise<void> {
  const { loopMs, writeNs, roundTripUs } = await probeMachine();
  notes.push(
    `this machine, ${when}: a fixed JavaScript loop ${loopMs.toFixed(0)} ms, a 64-byte write to /dev/null ${writeNs.toFixed(0)} ns, ` +
      `a loopback TCP round trip ${roundTripUs.toFixed(1)} µs (bench/README.md, "A shared machine")`,
  );
}

/** Issue 21's targets: import at least 150,000 plants/s on SQLite and 50,000/s on PostgreSQL, export 500,000/s, peak
 * RSS under 150 MB. */
async function bulk(floor: Running): Promise<void> {
  log(`bulk: writing ${options.bulkSize} plants as NDJSON`);
  const input = await writeImportFile(options.bulkSize);
  try {
    bulkRows.push(await floorBulk(floor, { file: input.file, count: options.bulkSize }));
    for (const store of options.stores) {
      log(`bulk: import and export of ${options.bulkSize} plants on ${store}`);
      const figures = await benchBulk(
        store,
        options.postgresUrl,
        { file: input.file, count: options.bulkSize },
        join(logDir, `bulk-${store}.log`),
        options.logLevel,
      );
      if (typeof figures === 'string') notes.push(figures);
      else bulkRows.push(figures);
    }
    notes.push(
      `bulk: ${options.bulkSize} plants, ${(input.bytes / 1e6).toFixed(1)} MB of NDJSON; targets: import >= 150,000 plants/s (sqlite), >= 50,000/s (postgres); export >= 500,000/s; peak RSS < 150 MB`,
    );
  } finally {
    input.cleanup();
  }
}

/** The change stream's targets, with --streams (1,000) open on one instance: a create's message on every stream within
 * 50 ms (p99) of its 200, creates at 0.8x the rate with none, the idle streams under 50 MB of RSS. */
async function streams(floor: Running): Promise<void> {
  log(`streams: ${options.streams} streams on the floor`);
  const floorFigures = await benchStreamsFloor(floor, options);
  streamRows.push(floorFigures);
  notes.push(...streamNotes(floorFigures));
  for (const store of options.stores) {
    log(`streams: ${options.streams} streams on ${store}`);
    const profileDir = options.profile ? join(ROOT, 'bench', 'results', 'profiles') : undefined;
    const figures = await benchStreams(store, { ...options, profileDir }, join(logDir, `streams-${store}.log`));
    if (typeof figures === 'string') notes.push(figures);
    else {
      streamRows.push(figures);
      notes.push(...streamNotes(figures));
      notes.push(
        `streams, ${store}: create req/s with the streams open ${(figures.createRps.streams / floorFigures.createRps.streams).toFixed(2)}x the floor's with the same streams open`,
      );
    }
  }
}

/** GET and /healthz p99 while heavy searches, imports and a stream catch-up run, against their idle p99 (mixed.ts). */
async function mixed(): Promise<void> {
  const {
    mixedSize: size,
    mixedSeconds: seconds,
    mixedImport: importSize,
    mixedLoad: load,
    postgresUrl,
    logLevel,
  } = options;
  const settings = { size, seconds, importSize, load, postgresUrl, logLevel };
  for (const store of options.stores) {
    log(`mixed: ${size} plants on ${store}, ${seconds} s idle, then ${seconds} s heavy (${load.join(', ')})`);
    const figures = await benchMixed(store, settings, join(logDir, `mixed-${store}.log`));
    if (typeof figures === 'string') notes.push(figures);
    else {
      mixedRows.push(figures);
      notes.push(...mixedNotes(figures));
    }
  }
}

const webhookRows: WebhookFigures[] = [];

/** The webhooks phase on each store (webhooks.ts). */
async function webhooks(): Promise<void> {
  for (const store of options.stores) {
    log(
      `webhooks on ${store}: ${options.webhookImport} plants imported, ${options.webhookSubscriptions} subscriptions`,
    );
    const figures = await benchWebhooks(store, options, (name) => join(logDir, `webhooks-${store}-${name}.log`), load);
    if (typeof figures === 'string') notes.push(figures);
    else webhookRows.push(figures);
  }
}

async function main(): Promise<void> {
  if (!options.noBuild) build();
  noteFsync('before the runs');
  await noteMachine('before the runs');
  const floor = await startFloor(join(logDir, 'floor.log'));
  try {
    const sizes = options.scale ? [options.storeSize, options.scaleSize] : [options.storeSize];
    if (options.cases.length > 0) for (const store of options.stores) await benchStore(store, sizes, floor);
    if (options.bulkSize > 0) await bulk(floor);
    if (options.streams > 0) await streams(floor);
    if (options.mixedSize > 0) await mixed();
    if (options.webhookImport > 0) await webhooks();
    // Last: its npm ci and build compete for the CPU with nothing else measured.
    if (options.firstRun) firstRun = await benchFirstRun(log);
    updateComparison();
    findComparison();
    if (options.scale) scaleComparison();
  } finally {
    await stop(floor);
  }
  noteFsync('after the runs');
  await noteMachine('after the runs');
  const setup =
    `${options.connections} connections, ${options.duration} s per run, median of ${options.repeats} runs, ` +
    `${cpus().length} CPUs, node ${process.version}, service LOG_LEVEL=${options.logLevel}`;
  const bulkTable = bulkRows.length === 0 ? '' : `${formatBulk(bulkRows)}\n\n`;
  const streamTable = streamRows.length === 0 ? '' : `${formatStreams(streamRows)}\n\n`;
  const mixedTable = mixedRows.length === 0 ? '' : `${formatMixed(mixedRows)}\n\n`;
  const webhookTable = webhookRows.length === 0 ? '' : `${formatWebhooks(webhookRows)}\n\n`;
  const caseTable = rows.length === 0 ? '' : `${formatTable(rows)}\n\n`;
  const firstRunTable = firstRun === undefined ? '' : `${formatFirstRun(firstRun)}\n\n`;
  const noteLines = [...new Set(notes)].map((n) => `- ${n}`).join('\n');
  process.stdout.write(
    `\n${setup}\n\n${caseTable}${bulkTable}${streamTable}${mixedTable}${webhookTable}${firstRunTable}${noteLines}\n`,
  );
  const document = {
    date: new Date().toISOString(),
    setup,
    options,
    rows,
    bulk: bulkRows,
    streams: streamRows,
    mixed: mixedRows,
    webhooks: webhookRows,
    firstRun,
    notes,
  };
  const file = writeResults(join(ROOT, 'bench', 'results'), document);
  process.stdout.write(`\nresults: ${file}\n`);
}

try {
  await main();
  rmSync(logDir, { recursive: true, force: true });
} catch (error) {
  process.stderr.write(`bench: failed; the servers' logs are in ${logDir}\n`);
  throw error;
}
