/**
 * The streams phase of `npm run bench`: --streams (1,000) open GET /events on one
 * instance, on each store, a service of its own started as `npm start` does.
 *
 * 1. Creates at full speed with no stream open (a 1 s warm-up first): req/s.
 * 2. The streams opened from a process of their own (stream-clients.ts); the
 *    service's resident set with them idle, against just before.
 * 3. A paced writer in that process creates 1,000 plants/s for 5 s; per create, the
 *    delay from its 200 to its message on the last stream (and on every stream).
 * 4. The creates of 1 again, the streams open and reading: req/s, and the ratio to 1.
 *
 * Issue targets: the p99 of 3 under 50 ms, the ratio of 4 at least 0.8, the idle
 * streams under 50 MB of RSS in all.
 *
 * The same steps run first against the floor (floor-server.ts: the messages in the
 * service's format and batches, with no store), so that the service's ratio of 4 is
 * read beside what the protocol itself leaves of this machine's create rate.
 */
import type { ChildProcess } from 'node:child_process';
import { READ_EVERY_MS } from '../src/events/change-hub.js';
import type { LoadResult } from './load-runner.js';
import type { StoreName } from './options.js';
import { cpuMs, currentRss, runLoadProcess, spawnBenchScript, startService, stop, type Running } from './processes.js';
import { median } from './report.js';
import type { LatencyFigures, StreamCommand, StreamCounts, StreamReply } from './stream-clients.js';
import { prepareStore } from './stores.js';

/** Plants seeded: none, as the phase creates what it streams and reads nothing else. */
const STORE_SIZE = 0;
const LATENCY_RATE = 1000;
const LATENCY_SECONDS = 5;
/** Ids of the paced writer's plants: below 2^53 (the clients read them as numbers) and far from every other case's. */
const LATENCY_ID_BASE = 7_000_000_000_000_000;
/** Time for the service's heap to settle before its resident set is read. */
const SETTLE_MS = 2000;

export interface StreamSettings {
  readonly streams: number;
  readonly duration: number;
  readonly connections: number;
  readonly repeats: number;
  readonly postgresUrl: string;
  readonly logLevel: string;
  /** Another build of the service (a directory laid out like dist/), for experiments; dist/ by default. */
  readonly buildDir?: string;
  /** Where to write a --cpu-prof profile of the service (npm run bench -- --profile). */
  readonly profileDir?: string;
}

export interface StreamFigures {
  readonly store: StoreName | 'floor';
  readonly streams: number;
  readonly openSeconds: number;
  /** VmRSS of the server: as the phase began, before the streams opened (after the creates of step 1), with them open
   * and idle. */
  readonly rssMb: { readonly started: number; readonly before: number; readonly idle: number };
  /** Median create req/s (and the service's CPU µs per create) with no stream open and with the streams open. */
  readonly createRps: { readonly none: number; readonly streams: number };
  readonly createCpuMicros: { readonly none: number; readonly streams: number };
  readonly ratio: number;
  readonly latency: LatencyFigures;
  /** The service's CPU per create of the paced writer, streams included. */
  readonly latencyCpuMicrosPerCreate: number;
  /** What the streams received during the creates of step 4. */
  readonly duringLoad: StreamCounts;
  readonly runs: { readonly none: readonly LoadResult[]; readonly streams: readonly LoadResult[] };
}

/** The stream-clients process: one command at a time, one answer each. */
class StreamClients {
  private readonly child: ChildProcess;
  private readonly exited: Promise<number | null>;

  constructor() {
    this.child = spawnBenchScript('stream-clients.ts', [], ['ignore', 'inherit', 'inherit', 'ipc']);
    this.exited = new Promise((resolve) => this.child.once('exit', resolve));
  }

  async ask<T extends StreamReply['type']>(
    command: StreamCommand,
    expected: T,
  ): Promise<Extract<StreamReply, { type: T }>> {
    const answer = new Promise<StreamReply>((resolve, reject) => {
      this.child.once('message', (message) => resolve(message as StreamReply));
      void this.exited.then((code) => reject(new Error(`the stream clients exited (${code}) during ${command.cmd}`)));
    });
    this.child.send(command);
    const reply = await answer;
    if (reply.type === 'error') throw new Error(`stream clients: ${reply.message}`);
    if (reply.type !== expected) throw new Error(`stream clients answered ${reply.type} to ${command.cmd}`);
    return reply as Extract<StreamReply, { type: T }>;
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || !this.child.connected) return;
    this.child.send({ cmd: 'close' } satisfies StreamCommand);
    await this.exited;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The median of a few samples of VmRSS over a second, after letting the service settle. */
async function settledRss(pid: number): Promise<number> {
  await sleep(SETTLE_MS);
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    samples.push(currentRss(pid));
    await sleep(200);
  }
  return median(samples);
}

/** What the phase measures: a running server, its process, a token for it and the plants its store holds. */
interface StreamTarget {
  readonly url: string;
  readonly pid: number;
  readonly token: string;
  readonly size: number;
}

/** Steps 1-4 against one server (the service on a store, or the floor). */
async function measureStreams(
  name: StreamFigures['store'],
  target: StreamTarget,
  settings: StreamSettings,
): Promise<StreamFigures> {
  const { pid } = target;
  const started = currentRss(pid);
  let run = 0;
  const creates = async (duration: number): Promise<LoadResult> => {
    const cpuBefore = cpuMs(pid);
    const result = await runLoadProcess({
      url: target.url,
      case: 'create',
      token: target.token,
      run: run++,
      storeSize: target.size,
      connections: settings.connections,
      duration,
    });
    if (Object.keys(result.statuses).some((status) => status !== '200') || result.errors > 0) {
      throw new Error(
        `${name}: streams phase creates answered ${JSON.stringify(result.statuses)}, ${result.errors} errors`,
      );
    }
    return { ...result, cpuMicrosPerRequest: ((cpuMs(pid) - cpuBefore) * 1000) / result.requests };
  };
  await creates(1);
  const none: LoadResult[] = [];
  for (let i = 0; i < settings.repeats; i++) none.push(await creates(settings.duration));

  const before = await settledRss(pid);
  const clients = new StreamClients();
  try {
    const opened = await clients.ask(
      { cmd: 'open', url: target.url, token: target.token, streams: settings.streams },
      'opened',
    );
    if (opened.failures.length > 0 || opened.streams !== settings.streams) {
      throw new Error(
        `${name}: ${opened.streams} of ${settings.streams} streams opened: ${opened.failures.join('; ')}`,
      );
    }
    const idle = await settledRss(pid);

    const cpuBefore = cpuMs(pid);
    const { figures: latency } = await clients.ask(
      { cmd: 'latency', rate: LATENCY_RATE, seconds: LATENCY_SECONDS, idBase: LATENCY_ID_BASE, waitMs: 10_000 },
      'latency',
    );
    const latencyCpuMicrosPerCreate = ((cpuMs(pid) - cpuBefore) * 1000) / latency.creates;

    await clients.ask({ cmd: 'mark' }, 'marked');
    const withStreams: LoadResult[] = [];
    for (let i = 0; i < settings.repeats; i++) withStreams.push(await creates(settings.duration));
    // The messages of the last creates may still be on their way.
    await sleep(1000);
    const { counts: duringLoad } = await clients.ask({ cmd: 'report' }, 'counts');

    const rps = (runs: readonly LoadResult[]) => median(runs.map((r) => r.rps));
    const cpu = (runs: readonly LoadResult[]) => median(runs.map((r) => r.cpuMicrosPerRequest ?? Number.NaN));
    return {
      store: name,
      streams: settings.streams,
      openSeconds: opened.seconds,
      rssMb: { started, before, idle },
      createRps: { none: rps(none), streams: rps(withStreams) },
      createCpuMicros: { none: cpu(none), streams: cpu(withStreams) },
      ratio: rps(withStreams) / rps(none),
      latency,
      latencyCpuMicrosPerCreate,
      duringLoad,
      runs: { none, streams: withStreams },
    };
  } finally {
    await clients.close();
  }
}

export async function benchStreams(
  store: StoreName,
  settings: StreamSettings,
  logFile: string,
): Promise<StreamFigures | string> {
  const prepared = await prepareStore(store, STORE_SIZE, settings.postgresUrl, settings.buildDir);
  if ('skipped' in prepared) return `${store}: streams skipped: ${prepared.skipped}`;
  const env = { EVENTS_MAX_STREAMS_PER_TOKEN: String(settings.streams) };
  let service: Running | undefined;
  try {
    service = await startService({
      databaseUrl: prepared.databaseUrl,
      logLevel: settings.logLevel,
      logFile,
      env,
      buildDir: settings.buildDir,
      profileDir: settings.profileDir,
    });
    return await measureStreams(
      store,
      { url: service.url, pid: service.child.pid as number, token: prepared.token, size: prepared.size },
      settings,
    );
  } finally {
    if (service !== undefined) await stop(service);
    await prepared.cleanup();
  }
}

/** The same steps against the floor (floor-server.ts): what this machine gives the protocol itself, with no store. */
export function benchStreamsFloor(floor: Running, settings: StreamSettings): Promise<StreamFigures> {
  return measureStreams(
    'floor',
    { url: floor.url, pid: floor.child.pid as number, token: 'floor', size: STORE_SIZE },
    settings,
  );
}

const ms = (value: number) => value.toFixed(1);

export function formatStreams(rows: readonly StreamFigures[]): string {
  const lines = [
    '| streams | store | idle RSS MB (before -> open: cost) | create req/s none / open (ratio) | CPU µs/create none / open | 200 -> last stream p50 / p99 / max ms | 200 -> each stream p50 / p99 / max ms | achieved creates/s | missing |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const row of rows) {
    const { latency: l } = row;
    lines.push(
      `| ${row.streams} | ${row.store} | ${row.rssMb.before.toFixed(0)} -> ${row.rssMb.idle.toFixed(0)}: +${(row.rssMb.idle - row.rssMb.before).toFixed(1)} | ` +
        `${Math.round(row.createRps.none)} / ${Math.round(row.createRps.streams)} (${row.ratio.toFixed(2)}x) | ` +
        `${row.createCpuMicros.none.toFixed(0)} / ${row.createCpuMicros.streams.toFixed(0)} | ` +
        `${ms(l.lastStream.p50)} / ${ms(l.lastStream.p99)} / ${ms(l.lastStream.max)} | ${ms(l.allStreams.p50)} / ${ms(l.allStreams.p99)} / ${ms(l.allStreams.max)} | ` +
        `${Math.round(l.achievedRate)} | ${l.missing} |`,
    );
  }
  return lines.join('\n');
}

/** The floor's figures, the bound the service's are read against. */
function floorNotes(row: StreamFigures): string[] {
  const { latency: l } = row;
  return [
    `streams, floor (a bare server writing each ${READ_EVERY_MS} ms batch to every stream, no store): create req/s with ${row.streams} streams open ` +
      `${Math.round(row.createRps.streams)} against ${Math.round(row.createRps.none)} with none: ${row.ratio.toFixed(2)}x; CPU µs/create ${row.createCpuMicros.streams.toFixed(0)} against ` +
      `${row.createCpuMicros.none.toFixed(0)}; at ${Math.round(l.achievedRate)} creates/s, 200 -> last stream p99 ${ms(l.lastStream.p99)} ms`,
  ];
}

/** The notes main.ts prints under the tables: each figure against its target, and anything that makes a figure
 * doubtful. */
export function streamNotes(row: StreamFigures): string[] {
  const { latency: l, duringLoad: d } = row;
  if (row.store === 'floor') return [...floorNotes(row), ...integrityNotes(row)];
  const notes = [
    `streams, ${row.store}: ${row.streams} streams, a create's message on the last stream p99 ${ms(l.lastStream.p99)} ms after its 200 ` +
      `(p50 ${ms(l.lastStream.p50)}, max ${ms(l.lastStream.max)}; target p99 < 50 ms) at ${Math.round(l.achievedRate)} creates/s for ${LATENCY_SECONDS} s; ` +
      `on every stream p99 ${ms(l.allStreams.p99)} ms; first stream p99 ${ms(l.firstStream.p99)} ms; the creates' own p99 ${ms(l.create.p99)} ms; ` +
      `service CPU ${row.latencyCpuMicrosPerCreate.toFixed(0)} µs per create; ${(l.creates / l.readsPerStream).toFixed(1)} messages per read on a stream; ` +
      `the clients' process used ${l.clientCpuCores.toFixed(2)} cores`,
    `streams, ${row.store}: create req/s with ${row.streams} streams open ${Math.round(row.createRps.streams)} against ${Math.round(row.createRps.none)} with none: ` +
      `${row.ratio.toFixed(2)}x (target >= 0.8x); CPU µs/create ${row.createCpuMicros.streams.toFixed(0)} against ${row.createCpuMicros.none.toFixed(0)}; ` +
      `${(row.runs.streams.reduce((sum, r) => sum + r.requests, 0) / d.readsPerStream).toFixed(1)} messages per read on a stream; the clients' process used ${d.clientCpuCores.toFixed(2)} cores`,
    `streams, ${row.store}: ${row.streams} idle streams cost ${(row.rssMb.idle - row.rssMb.before).toFixed(1)} MB of RSS in all ` +
      `(${row.rssMb.before.toFixed(0)} -> ${row.rssMb.idle.toFixed(0)} MB; ${row.rssMb.started.toFixed(0)} MB just started; target < 50 MB); opened in ${row.openSeconds.toFixed(2)} s`,
    ...integrityNotes(row),
  ];
  return notes;
}

/** What makes a row's figures doubtful: creates that failed, messages that never came, streams that ended or fell
 * apart. */
function integrityNotes(row: StreamFigures): string[] {
  const { latency: l, duringLoad: d } = row;
  const notes: string[] = [];
  if (l.missing > 0 || Object.keys(l.statuses).some((status) => status !== '200')) {
    notes.push(
      `streams, ${row.store}: the paced creates answered ${JSON.stringify(l.statuses)}; ${l.missing} messages (create x stream) never arrived`,
    );
  }
  if (d.ended > 0 || d.lastIds.length !== 1 || d.minBytes !== d.maxBytes) {
    notes.push(
      `streams, ${row.store}: during the creates with streams open ${d.ended} streams ended (${d.overflowed} overflowed); ` +
        `the streams received ${d.minBytes}-${d.maxBytes} bytes and ended at ids ${d.lastIds.join(', ')}`,
    );
  }
  return notes;
}
