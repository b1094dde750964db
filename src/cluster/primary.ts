/**
 * A multi-worker instance's primary (WORKERS > 1, docs/deploying.md "Workers"): it migrates the store and prints
 * the first-start banner once, owns the SQLite writer the workers write through, starts WORKERS worker processes
 * that serve HTTP on one port (node:cluster), replaces one that dies, and stops them all on SIGTERM. It serves no
 * HTTP itself. A worker that cannot start stops the whole instance: never a half-up instance.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { ConfigError, type Config } from '../config/index.js';
import { EventTickets } from '../events/tickets.js';
import { processLogger } from '../logging.js';
import { mergeExpositions } from '../metrics/merge-text.js';
import { bootstrapBanner } from '../server.js';
import { openStore } from '../store/open-store.js';
import type { Store } from '../store/types.js';
import { describeStore } from '../system/store-description.js';
import { SERVICE_VERSION } from '../system/version.js';
import { firstStartToken, hasNoTokens } from '../tokens/token-service.js';
import { BACKGROUND_SLOT } from './background-slot.js';
import { Peer, type Channel } from './peer.js';
import { sharedWrites } from './primary-writes.js';
import type { PrimaryAnswers, PrimaryHears, WorkerAnswers, WorkerHears } from './protocol.js';
import { RateCounts } from './rate-counts.js';

/** How long the primary waits for one worker's answer (metrics, readiness, a revocation) before leaving it out. */
const WORKER_ANSWER_MS = 2000;

type WorkerPeer = Peer<PrimaryAnswers, WorkerAnswers, PrimaryHears, WorkerHears>;

interface Slot {
  readonly number: number;
  worker: Worker;
  peer: WorkerPeer;
  url: string | undefined;
}

function channelTo(worker: Worker): Channel {
  return {
    send: (message) => {
      if (!worker.isConnected()) throw new Error(`worker ${worker.id} is gone`);
      // With a callback, a send to a worker dying meanwhile fails here, not as an 'error' event that would end the
      // primary; the worker's exit fails what waited for it (peer.ts).
      worker.send(message, undefined, undefined, () => undefined);
    },
    onMessage: (listener) => worker.on('message', listener),
    onGone: (listener) => worker.once('exit', listener),
  };
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
    promise.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}

function exitText(code: number | null, signal: string | null): string {
  return signal === null ? `exit code ${code ?? 'unknown'}` : `signal ${signal}`;
}

class Primary {
  private readonly slots: Slot[] = [];
  private readonly rates = new RateCounts();
  private readonly tickets: EventTickets;
  private readonly answerWrites;
  private stopping: Promise<void> | undefined;
  private failedWorkers = 0;

  constructor(
    private readonly config: Config,
    private readonly store: Store,
    private readonly log: Logger,
    private readonly onFatal: (error: Error) => void,
  ) {
    this.tickets = new EventTickets(config.events.ticketTtlMs, config.events.maxStreamsPerToken);
    const writer =
      'sharedWriter' in store && typeof store.sharedWriter === 'function' ? store.sharedWriter() : undefined;
    this.answerWrites = writer === undefined ? undefined : sharedWrites(writer, () => this.tellAll('committed'));
  }

  /** Starts every worker; resolves with the instance's URL once all listen, or rejects once one cannot start. */
  async start(): Promise<string> {
    cluster.setupPrimary({ serialization: 'advanced' });
    const started = [];
    for (let number = 1; number <= this.config.workers; number++) started.push(this.fork(number));
    const urls = await Promise.all(started);
    return urls[0] as string;
  }

  /** Stops every worker (each drains its requests, as one process does on SIGTERM), then closes the store. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      const exits = this.slots.map(
        (slot) =>
          new Promise<void>((resolve) => {
            if (slot.worker.isDead()) resolve();
            else {
              slot.worker.once('exit', () => resolve());
              slot.worker.process.kill('SIGTERM');
            }
          }),
      );
      await Promise.all(exits);
      await this.store.close();
      if (this.failedWorkers > 0) throw new Error(`${this.failedWorkers} worker(s) did not stop cleanly`);
    })();
    return this.stopping;
  }

  private fork(number: number, existing?: Slot): Promise<string> {
    const worker = cluster.fork({ PLANTSTORE_WORKER_SLOT: String(number) });
    const peer: WorkerPeer = new Peer(channelTo(worker));
    worker.on('error', (error) => this.log.warn({ err: error, worker: worker.id }, 'IPC with a worker failed'));
    const slot: Slot = existing ?? { number, worker, peer, url: undefined };
    slot.worker = worker;
    slot.peer = peer;
    slot.url = undefined;
    if (existing === undefined) this.slots.push(slot);
    this.answer(peer);
    return new Promise((resolve, reject) => {
      peer.on('listening', ({ url }) => {
        slot.url = url;
        resolve(url);
      });
      worker.on('exit', (code, signal) => {
        if (slot.worker !== worker) return;
        if (this.stopping !== undefined) {
          if (code !== 0) this.failedWorkers += 1;
          return;
        }
        if (slot.url === undefined) {
          const why = `worker ${worker.id} (of ${this.config.workers}) could not start (${exitText(code, signal)})`;
          // Status 2 is a configuration error (src/cli/main.ts), printed by the worker: the instance's status too.
          reject(code === 2 ? new ConfigError(why) : new Error(why));
          return;
        }
        this.replace(slot, worker, exitText(code, signal));
      });
    });
  }

  /** A worker died while serving: its in-flight requests are lost to it; a new one takes its place at once. */
  private replace(slot: Slot, dead: Worker, how: string): void {
    this.log.error({ deadWorker: dead.id, slot: slot.number }, `worker ${dead.id} stopped (${how}); starting another`);
    this.fork(slot.number, slot).then(
      () =>
        this.log.info(
          { slot: slot.number, newWorker: slot.worker.id },
          `worker ${slot.worker.id} replaced worker ${dead.id}`,
        ),
      (error: unknown) => this.onFatal(error instanceof Error ? error : new Error(String(error))),
    );
  }

  private live(): Slot[] {
    return this.slots.filter((slot) => slot.url !== undefined && !slot.worker.isDead());
  }

  private tellAll(topic: keyof WorkerHears): void {
    for (const slot of this.live()) slot.peer.tell(topic, null);
  }

  private answer(peer: WorkerPeer): void {
    peer.answer('writes', (writes) => {
      if (this.answerWrites === undefined) throw new Error('this instance has no SQLite writer');
      return this.answerWrites(writes);
    });
    peer.on('nudge', () => this.slots.find((slot) => slot.number === BACKGROUND_SLOT)?.peer.tell('nudge', null));
    peer.answer('metrics', async () => {
      const texts = await Promise.all(
        this.live().map(async (slot) => ({
          worker: String(slot.worker.id),
          text: await within(slot.peer.ask('metrics', null), WORKER_ANSWER_MS, `worker ${slot.worker.id}`).catch(
            () => '',
          ),
        })),
      );
      return mergeExpositions(texts);
    });
    peer.answer('readiness', () => this.readiness());
    peer.answer('revoked', async (tokenIds) => {
      // Every worker drops it before the revocation is answered: the next request anywhere is refused.
      await Promise.all(
        this.live().map((slot) =>
          within(slot.peer.ask('forget', tokenIds), WORKER_ANSWER_MS, `worker ${slot.worker.id}`).catch(() => null),
        ),
      );
      return null;
    });
    peer.answer('ticket-issue', ({ secret, tokenId }) => this.tickets.issue(secret, tokenId));
    peer.answer('ticket-redeem', (ticket) => this.tickets.redeem(ticket));
    peer.answer('rate-count', (count) => this.rates.count(count));
  }

  private async readiness(): Promise<string | null> {
    if (this.stopping !== undefined) return 'the instance is stopping';
    const missing = this.slots.filter((slot) => slot.url === undefined || slot.worker.isDead());
    if (missing.length > 0) return `${missing.length} of ${this.config.workers} workers are starting`;
    try {
      await this.store.ping();
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
    const problems = await Promise.all(
      this.live().map((slot) =>
        within(slot.peer.ask('ping', null), WORKER_ANSWER_MS, `worker ${slot.worker.id}`).catch(
          (error: unknown) => `worker ${slot.worker.id}: ${error instanceof Error ? error.message : String(error)}`,
        ),
      ),
    );
    return problems.find((problem) => problem !== null) ?? null;
  }
}

/** Runs the primary until SIGTERM or SIGINT; rejects (the CLI exits 1) when the instance cannot start. */
export async function runPrimary(config: Config): Promise<void> {
  let early: NodeJS.Signals | undefined;
  let onSignal = (signal: NodeJS.Signals): void => {
    early ??= signal;
  };
  process.on('SIGTERM', (signal) => onSignal(signal));
  process.on('SIGINT', (signal) => onSignal(signal));
  const log = await processLogger(config, { worker: 'primary' });
  // Migrations run here, once, before any worker opens the store.
  const store = await openStore(config.databaseUrl, {
    ...config,
    onBackgroundError: (error) =>
      log.error({ err: error }, 'a database connection failed while idle; the pool replaced it'),
  });
  let failed: ((error: Error) => void) | undefined;
  const fatal = new Promise<never>((_resolve, reject) => {
    failed = reject;
  });
  const primary = new Primary(config, store, log, (error) => failed?.(error));
  let url: string;
  try {
    // As a single process does (server.ts): asked before listening, made once every worker listens.
    const firstStart = await hasNoTokens(store.tokens);
    url = await Promise.race([primary.start(), fatal]);
    const bootstrapToken = firstStart ? await firstStartToken(store.tokens, log) : undefined;
    log.info({ workers: config.workers }, `Server listening at ${url}`);
    log.info(
      {
        version: SERVICE_VERSION,
        node: process.version,
        store: describeStore(config.databaseUrl),
        workers: config.workers,
      },
      `Plant Store ${SERVICE_VERSION} running on Node.js`,
    );
    if (bootstrapToken !== undefined) process.stdout.write(`\n${bootstrapBanner(url, bootstrapToken)}\n\n`);
  } catch (error) {
    await primary.stop().catch(() => undefined);
    throw error;
  }
  const shutdown = (signal: NodeJS.Signals | 'failure', code: number) => {
    log.info({ signal }, 'shutting down: every worker finishes its in-flight requests');
    const force = setTimeout(() => {
      log.error({ timeoutMs: config.shutdownTimeoutMs }, 'shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs + 1000);
    force.unref();
    primary.stop().then(
      () => {
        log.info('stopped');
        log.flush();
        process.exit(code);
      },
      (error: unknown) => {
        log.error({ err: error }, 'error while shutting down');
        log.flush();
        process.exit(1);
      },
    );
  };
  let stopping = false;
  onSignal = (signal) => {
    if (stopping) return;
    stopping = true;
    shutdown(signal, 0);
  };
  fatal.catch((error: unknown) => {
    if (stopping) return;
    stopping = true;
    log.error({ err: error }, 'a worker could not start again; the instance stops');
    process.stderr.write(`plantstore: ${error instanceof Error ? error.message : String(error)}\n`);
    shutdown('failure', 1);
  });
  if (early !== undefined) onSignal(early);
}
