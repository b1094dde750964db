/**
 * The mixed phase of `npm run bench`: does heavy work by some clients stall the others?
 * On each store, a service of its own on a store of --mixed-size plants (and a change
 * log of one --mixed-import import, written before the phase, for a stream to catch up on):
 *
 * 1. Idle: probes `GET /plants/{id}` and `GET /healthz`, each every PROBE_INTERVAL_MS for
 *    --mixed-seconds, from a process of their own (mixed-probes.ts): p50, p99, max.
 * 2. Heavy: the same probes for the same time while, from this process, one client per
 *    expensive search shape loops (mixed-load.ts HEAVY_SEARCHES), imports of
 *    --mixed-import new plants run back to back, so do imports of junk lines that give no
 *    plant, and a GET /events reader catches up from before the backlog as fast as it
 *    reads, resuming whenever the service ends its stream.
 *
 * The figure is each probe's heavy p99 over its idle p99, both from this run on this
 * machine: a ratio near 1 means no request stalled the probes; absolute latencies say as
 * much about the machine (and its neighbours) as about the service.
 */
import type { ChildProcess } from 'node:child_process';
import type { MixedLoadName, StoreName } from './options.js';
import { spawnBenchScript, startService, stop, type Running } from './processes.js';
import { prepareStore } from './stores.js';
import type { ProbeCommand, ProbeFigures, ProbeName, ProbeReply } from './mixed-probes.js';
import {
  catchUp,
  HEAVY_SEARCHES,
  importLoop,
  importPlants,
  junkLoop,
  searchLoop,
  streamPosition,
  JUNK_LINES,
  type CatchUp,
  type ImportLoop,
  type RequestLoop,
  type Stop,
} from './mixed-load.js';

const PROBE_INTERVAL_MS = 20;
/** Probes still out this long after the last was sent count as unanswered. */
const PROBE_GRACE_MS = 30_000;
/** The heavy clients' requests in flight when the probes end may finish within this; then they are cut off. */
const DRAIN_MS = 30_000;
/** Probes sent, and thrown away, before the idle part: the probes' first connections and their process's warm-up. */
const WARM_UP_SECONDS = 1;
/** Ids of the imported plants: far above every seeded one. */
const FIRST_IMPORTED_ID = 100_000_000;

export interface MixedSettings {
  /** Plants seeded. */
  readonly size: number;
  /** Seconds of each of the idle and heavy parts. */
  readonly seconds: number;
  /** Plants per import (the backlog's, and each of the heavy part's). */
  readonly importSize: number;
  /** The heavy clients to run. */
  readonly load: readonly MixedLoadName[];
  readonly postgresUrl: string;
  readonly logLevel: string;
}

export interface MixedFigures {
  readonly store: StoreName;
  readonly plants: number;
  readonly seconds: number;
  readonly load: readonly MixedLoadName[];
  readonly idle: Record<ProbeName, ProbeFigures>;
  readonly heavy: Record<ProbeName, ProbeFigures>;
  /** Heavy p99 over idle p99, per probe. */
  readonly ratio: Record<ProbeName, number>;
  readonly searches: Record<string, RequestLoop>;
  readonly imports: ImportLoop;
  readonly junk: ImportLoop;
  /** Events the stream's catch-up started behind (the backlog import's). */
  readonly backlog: number;
  readonly catchUp: CatchUp;
  /** From the heavy clients' start until the last of them finished (the probes' time and what was in flight). */
  readonly heavySeconds: number;
}

/** The probes' process: one command at a time, one answer each. */
class Probes {
  private readonly child: ChildProcess;
  private readonly exited: Promise<number | null>;
  private readonly ready: Promise<ProbeReply>;

  constructor() {
    this.child = spawnBenchScript('mixed-probes.ts', [], ['ignore', 'inherit', 'inherit', 'ipc']);
    this.exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.ready = this.next('start');
  }

  private next(during: string): Promise<ProbeReply> {
    return new Promise<ProbeReply>((resolve, reject) => {
      this.child.once('message', (message) => resolve(message as ProbeReply));
      void this.exited.then((code) => reject(new Error(`the probes' process exited (${code}) during ${during}`)));
    });
  }

  async probe(command: Extract<ProbeCommand, { cmd: 'probe' }>): Promise<Record<ProbeName, ProbeFigures>> {
    await this.ready;
    const answer = this.next('probe');
    this.child.send(command);
    const reply = await answer;
    if (reply.type !== 'probed') throw new Error(`probes: ${reply.type === 'error' ? reply.message : reply.type}`);
    return reply.figures;
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || !this.child.connected) return;
    this.child.send({ cmd: 'close' } satisfies ProbeCommand);
    await this.exited;
  }
}

/** The figures of a heavy client not run (--mixed-load without it). */
const NOT_RUN_IMPORTS: ImportLoop = {
  done: 0,
  p50: Number.NaN,
  max: Number.NaN,
  statuses: {},
  errors: 0,
  cutOff: 0,
  plants: 0,
  seconds: 0,
};
const NOT_RUN_CATCH_UP: CatchUp = {
  events: 0,
  seconds: 0,
  connections: 0,
  overflows: 0,
  otherEnds: 0,
  statuses: {},
  errors: 0,
};

async function measure(store: StoreName, service: Running, token: string, settings: MixedSettings) {
  const { url } = service;
  const probes = new Probes();
  try {
    const probe = (seconds = settings.seconds) =>
      probes.probe({
        cmd: 'probe',
        url,
        token,
        storeSize: settings.size,
        seconds,
        intervalMs: PROBE_INTERVAL_MS,
        graceMs: PROBE_GRACE_MS,
      });
    const from = await streamPosition(url, token);
    const ids = { next: FIRST_IMPORTED_ID };
    const backlog = await importPlants(url, token, ids.next, settings.importSize);
    ids.next += settings.importSize;
    if (backlog.status !== 200 || backlog.created !== settings.importSize) {
      throw new Error(`${store}: the backlog import answered ${backlog.status} ${backlog.body.slice(0, 300)}`);
    }

    await probe(WARM_UP_SECONDS);
    const idle = await probe();

    let stopped = false;
    const abort = new AbortController();
    const stop: Stop = { stopped: () => stopped, signal: abort.signal };
    const started = performance.now();
    const runs = (name: MixedLoadName) => settings.load.includes(name);
    let ended = Number.NaN;
    const heavy = Promise.all([
      Promise.all((runs('searches') ? HEAVY_SEARCHES : []).map((search) => searchLoop(url, token, search, stop))),
      runs('import') ? importLoop(url, token, ids, settings.importSize, stop) : NOT_RUN_IMPORTS,
      runs('junk') ? junkLoop(url, token, stop) : NOT_RUN_IMPORTS,
      runs('stream') ? catchUp(url, token, from, settings.importSize, stop) : NOT_RUN_CATCH_UP,
    ]).then((done) => {
      ended = performance.now();
      return done;
    });
    let busy: Record<ProbeName, ProbeFigures>;
    try {
      busy = await probe();
    } finally {
      stopped = true;
    }
    const timer = setTimeout(() => abort.abort(), DRAIN_MS);
    const [searches, imports, junk, caught] = await heavy;
    clearTimeout(timer);
    return {
      store,
      plants: settings.size,
      seconds: settings.seconds,
      load: settings.load,
      idle,
      heavy: busy,
      ratio: { get: busy.get.p99 / idle.get.p99, healthz: busy.healthz.p99 / idle.healthz.p99 },
      searches: Object.fromEntries(searches.map((loop, i) => [HEAVY_SEARCHES[i]?.name, loop])),
      imports,
      junk,
      backlog: settings.importSize,
      catchUp: caught,
      heavySeconds: (ended - started) / 1000,
    };
  } finally {
    await probes.close();
  }
}

export async function benchMixed(store: StoreName, settings: MixedSettings, logFile: string) {
  const prepared = await prepareStore(store, settings.size, settings.postgresUrl);
  if ('skipped' in prepared) return `${store}: mixed phase skipped: ${prepared.skipped}`;
  let service: Running | undefined;
  try {
    service = await startService({ databaseUrl: prepared.databaseUrl, logLevel: settings.logLevel, logFile });
    return await measure(store, service, prepared.token, settings);
  } finally {
    if (service !== undefined) await stop(service);
    await prepared.cleanup();
  }
}

const ms = (value: number) => (Number.isNaN(value) ? '-' : value < 10 ? value.toFixed(1) : value.toFixed(0));
const count = (value: number) => Math.round(value).toLocaleString('en-US');
const HEADER = [
  'mixed',
  'plants',
  'GET idle p50 / p99 ms',
  'GET heavy p50 / p99 / max ms',
  'GET p99 heavy/idle',
  '/healthz idle p50 / p99 ms',
  '/healthz heavy p50 / p99 / max ms',
  '/healthz p99 heavy/idle',
  'searches done',
  'import plants/s',
  'junk imports',
  'events read (connections)',
];

export function formatMixed(rows: readonly MixedFigures[]): string {
  const lines = [`| ${HEADER.join(' | ')} |`, '|---|---:|---|---|---:|---|---|---:|---:|---:|---:|---|'];
  for (const row of rows) {
    const { idle, heavy } = row;
    const searches = Object.values(row.searches).reduce((sum, loop) => sum + loop.done, 0);
    const rate = row.imports.seconds > 0 ? count(row.imports.plants / row.imports.seconds) : '-';
    const cells = [
      row.store,
      count(row.plants),
      `${ms(idle.get.p50)} / ${ms(idle.get.p99)}`,
      `${ms(heavy.get.p50)} / ${ms(heavy.get.p99)} / ${ms(heavy.get.max)}`,
      `**${row.ratio.get.toFixed(1)}x**`,
      `${ms(idle.healthz.p50)} / ${ms(idle.healthz.p99)}`,
      `${ms(heavy.healthz.p50)} / ${ms(heavy.healthz.p99)} / ${ms(heavy.healthz.max)}`,
      `**${row.ratio.healthz.toFixed(1)}x**`,
      String(searches),
      rate,
      String(row.junk.done),
      `${count(row.catchUp.events)} (${row.catchUp.connections})`,
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

const statuses = (tally: Record<string, number>) =>
  Object.entries(tally)
    .map(([status, n]) => `${n}x ${status}`)
    .join(', ');

/** What the heavy clients did, one note each. */
function loadNotes(row: MixedFigures): string[] {
  const { catchUp: c, imports, junk } = row;
  const searches = Object.entries(row.searches).map(([name, l]) => `${name} ${l.done} / ${ms(l.p50)} / ${ms(l.max)}`);
  const backlogSeconds = c.backlogSeconds?.toFixed(1);
  const caughtUp = backlogSeconds === undefined ? 'never read the whole backlog' : `the backlog in ${backlogSeconds} s`;
  const done = searches.length === 0 ? 'not run' : searches.join('; ');
  return [
    `mixed, ${row.store}: ${row.seconds} s idle then ${row.seconds} s heavy (${row.load.join(', ')}; ` +
      `${row.heavySeconds.toFixed(1)} s until the heavy clients' last requests ended), ` +
      `probes every ${PROBE_INTERVAL_MS} ms each (${row.heavy.get.sent} GET, ${row.heavy.healthz.sent} /healthz)`,
    `mixed, ${row.store}: searches, one client each, done / p50 / max ms: ${done}`,
    `mixed, ${row.store}: imports of ${count(row.backlog)} plants back to back: ${imports.done} answered, ` +
      `${count(imports.plants)} plants in ${imports.seconds.toFixed(1)} s of importing ` +
      `(p50 ${ms(imports.p50)} ms each); junk imports of ${count(JUNK_LINES)} invalid lines: ` +
      `${junk.done} answered (p50 ${ms(junk.p50)} ms, max ${ms(junk.max)} ms)`,
    `mixed, ${row.store}: a GET /events reader resumed behind the backlog's ${count(row.backlog)} changes read ` +
      `${count(c.events)} events in ${c.seconds.toFixed(1)} s (${count(c.events / c.seconds)}/s) ` +
      `over ${c.connections} connections (${c.overflows} ended by stream.overflow, ${c.otherEnds} else), ${caughtUp}`,
  ];
}

interface Tally {
  readonly statuses: Record<string, number>;
  readonly errors: number;
  readonly cutOff?: number;
}

/** What each heavy client did, and every answer that was not the one expected. */
export function mixedNotes(row: MixedFigures): string[] {
  const unexpected: string[] = [];
  for (const part of ['idle', 'heavy'] as const) {
    for (const name of ['get', 'healthz'] as const) {
      const f = row[part][name];
      if (Object.keys(f.statuses).some((s) => s !== '200') || f.errors > 0 || f.unanswered > 0) {
        unexpected.push(
          `${part} ${name} probes: ${statuses(f.statuses)}, ${f.errors} socket errors, ` +
            `${f.unanswered} unanswered after ${PROBE_GRACE_MS / 1000} s`,
        );
      }
    }
  }
  const check = (name: string, loop: Tally, expected: string) => {
    const cutOff = loop.cutOff ?? 0;
    if (Object.keys(loop.statuses).some((s) => s !== expected) || loop.errors > 0 || cutOff > 0) {
      unexpected.push(
        `${name}: ${statuses(loop.statuses)}, ${loop.errors} socket errors, ` +
          `${cutOff} still in flight ${DRAIN_MS / 1000} s after the probes ended (cut off)`,
      );
    }
  };
  for (const [name, loop] of Object.entries(row.searches)) check(`search ${name}`, loop, '200');
  if (row.load.includes('import')) check('imports', row.imports, '200');
  if (row.load.includes('junk')) check('junk imports (400 expected)', row.junk, '400');
  if (row.load.includes('stream')) check('GET /events', row.catchUp, '200');
  const notes = loadNotes(row);
  if (unexpected.length > 0) notes.push(`mixed, ${row.store}: unexpected answers: ${unexpected.join('; ')}`);
  return notes;
}
