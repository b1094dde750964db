/**
 * `npm run bench`: the service against the floor (a bare Fastify server), on
 * every reachable store, with the same load generator, connections and duration.
 *
 * For each store: a fresh store with a real token and --store-size seeded plants,
 * the service started from dist/ as `npm start` runs it. For each case: a short
 * warm-up of both servers, then --repeats measured runs alternating floor and
 * service (so drift in the machine hits both alike), then a run at a fixed offered
 * load of half the service's measured maximum. Medians are quoted.
 *
 * --scale repeats the cases with 1,000,000 plants and compares create req/s and
 * get p99 with the normal store, and start-up time with each.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { probeFsync } from './fsync-probe.js';
import type { LoadSpec } from './load-runner.js';
import { parseOptions, type BenchOptions, type CaseName } from './options.js';
import { cpuMs, peakRss, ROOT, runLoadProcess, startFloor, startService, stop, type Running } from './processes.js';
import { formatTable, median, summarise, writeResults, type Row } from './report.js';
import { prepareStore, type PreparedStore } from './stores.js';

const options = parseOptions(process.argv.slice(2), process.env);
const rows: Row[] = [];
const notes: string[] = [];
let runNumber = 0;
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

async function benchCase(kase: CaseName, prepared: PreparedStore, service: Running, floor: Running, o: BenchOptions) {
  const spec = { case: kase, token: prepared.token, storeSize: prepared.size, connections: o.connections, duration: o.duration };
  log(`${kase} on ${prepared.store} (${prepared.size} plants): warm-up`);
  await load(floor, { ...spec, duration: 1 });
  await load(service, { ...spec, duration: 1 });
  const floorRuns = [];
  const serviceRuns = [];
  for (let i = 0; i < o.repeats; i++) {
    log(`${kase} on ${prepared.store}: run ${i + 1} of ${o.repeats}`);
    if (i % 2 === 0) floorRuns.push(await load(floor, spec));
    serviceRuns.push(await load(service, spec));
    if (i % 2 === 1) floorRuns.push(await load(floor, spec));
  }
  const floorRow = summarise(kase, 'floor', prepared.size, floorRuns);
  const serviceRow = summarise(kase, prepared.store, prepared.size, serviceRuns);
  let halfLoad: Row['halfLoad'];
  if (o.paced) {
    const offered = serviceRow.rps / 2;
    log(`${kase} on ${prepared.store}: fixed load of ${Math.round(offered)} req/s`);
    const paced = await load(service, { ...spec, rate: offered });
    halfLoad = { offered, achieved: paced.rps, p99: paced.p99, p50: paced.p50 };
  }
  const pid = service.child.pid as number;
  rows.push(floorRow, { ...serviceRow, ratio: serviceRow.rps / floorRow.rps, peakRssMb: peakRss(pid), halfLoad });
}

async function benchStore(store: 'sqlite' | 'postgres', size: number, cases: readonly CaseName[], floor: Running) {
  log(`preparing ${store} with ${size} plants`);
  const prepared = await prepareStore(store, size, options.postgresUrl);
  if ('skipped' in prepared) {
    notes.push(`${store}: skipped: ${prepared.skipped}`);
    return;
  }
  notes.push(`${store}, ${size} plants: seeded in ${Math.round(prepared.seedMs)} ms`);
  const profileDir = options.profile ? join(ROOT, 'bench', 'results', 'profiles') : undefined;
  const logFile = join(logDir, `service-${store}-${size}.log`);
  const service = await startService({ databaseUrl: prepared.databaseUrl, logLevel: options.logLevel, logFile, profileDir });
  notes.push(`${store}, ${size} plants: start-up to first answered request ${Math.round(service.startupMs)} ms`);
  try {
    for (const kase of cases) await benchCase(kase, prepared, service, floor, options);
  } finally {
    await stop(service);
    await prepared.cleanup();
  }
}

function scaleComparison(): void {
  for (const store of options.stores) {
    const at = (kase: string, plants: number) => rows.find((r) => r.case === kase && r.store === store && r.plants === plants);
    const [createSmall, createLarge] = [at('create', options.storeSize), at('create', options.scaleSize)];
    const [getSmall, getLarge] = [at('get', options.storeSize), at('get', options.scaleSize)];
    if (createSmall !== undefined && createLarge !== undefined) {
      notes.push(`${store} scale: create req/s with ${options.scaleSize} plants is ${(createLarge.rps / createSmall.rps).toFixed(2)}x that with ${options.storeSize}`);
    }
    if (getSmall !== undefined && getLarge !== undefined) {
      notes.push(`${store} scale: get p99 with ${options.scaleSize} plants is ${(getLarge.p99 / getSmall.p99).toFixed(2)}x that with ${options.storeSize}`);
    }
  }
}

/** The disk's durable-write latency: the floor under any durable create's latency here. */
function noteFsync(when: string): void {
  const { p50, p99, max } = probeFsync();
  notes.push(`fsync of a 4 KB write on this disk, ${when}: p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms, max ${max.toFixed(2)} ms`);
}

async function main(): Promise<void> {
  if (!options.noBuild) build();
  noteFsync('before the runs');
  const floor = await startFloor(join(logDir, 'floor.log'));
  try {
    for (const store of options.stores) await benchStore(store, options.storeSize, options.cases, floor);
    if (options.scale) {
      for (const store of options.stores) await benchStore(store, options.scaleSize, options.cases, floor);
      scaleComparison();
    }
  } finally {
    await stop(floor);
  }
  noteFsync('after the runs');
  const setup = `${options.connections} connections, ${options.duration} s per run, median of ${options.repeats} runs, ` +
    `${cpus().length} CPUs, node ${process.version}, service LOG_LEVEL=${options.logLevel}`;
  process.stdout.write(`\n${setup}\n\n${formatTable(rows)}\n\n${[...new Set(notes)].map((n) => `- ${n}`).join('\n')}\n`);
  const file = writeResults(join(ROOT, 'bench', 'results'), { date: new Date().toISOString(), setup, options, rows, notes });
  process.stdout.write(`\nresults: ${file}\n`);
}

try {
  await main();
  rmSync(logDir, { recursive: true, force: true });
} catch (error) {
  process.stderr.write(`bench: failed; the servers' logs are in ${logDir}\n`);
  throw error;
}
