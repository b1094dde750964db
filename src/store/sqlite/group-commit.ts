/**
 * SQLite group commit, the main thread's side of the writer thread (writer-worker.ts): a commit costs an
 * fsync, so the plant writes that queue meanwhile go as one transaction; each settles once it is on disk.
 * One unit (a batch, or one delegated token/webhook write, or the attempt records queued together) is in flight at
 * a time: writes apply in order.
 */
import type { Worker } from 'node:worker_threads';
import { Batcher, type BatchCounts } from '../core/batcher.js';
import { StoreUnavailableError } from '../errors.js';
import type { SqliteHealth } from './health.js';
import { spawnWorker } from './spawn-worker.js';
import type { StoreWriter } from './store-writer.js';
import type { WriterWorkerData } from './writer-worker.js';
import {
  SHARED_TRANSACTION_CALLS,
  type CallRequest,
  type CallsRequest,
  type CloseRequest,
  type DelegatedMethod,
  type DelegatedStore,
  type PlantsRequest,
  type PlantWrite,
  type PlantWriteResult,
  type WriteArgs,
  type WriteFailure,
  type WriteResult,
  type SettledCall,
  type UntypedCall,
  type WriterReply,
} from './writer-protocol.js';

/** Bounds one transaction's size, so one batch never holds the write lock for long. */
const MAX_BATCH = 1024;

type Queued =
  | {
      readonly kind: 'plant';
      readonly write: PlantWrite;
      readonly resolve: (result: PlantWriteResult) => void;
      readonly reject: (error: unknown) => void;
    }
  | {
      readonly kind: 'call';
      /** Sends the call as unit `unit` (built where its types are known: see call()). */
      readonly post: (worker: Worker, unit: number) => void;
      /** Set for SHARED_TRANSACTION_CALLS: the call as it goes in a CallsRequest with others. */
      readonly shared: UntypedCall | undefined;
      readonly resolve: (value: unknown) => void;
      readonly reject: (error: unknown) => void;
    };

/** The unit in flight: its reply settles `batch`, then `done` lets the batcher send the next. */
interface Awaiting {
  readonly unit: number;
  readonly batch: Queued[];
  readonly done: () => void;
}

function rebuildError({ message, unavailable }: WriteFailure): Error {
  return unavailable ? new StoreUnavailableError(message) : new Error(message);
}

const isShared = (item: Queued | undefined) => item?.kind === 'call' && item.shared !== undefined;

/**
 * The next unit: the plant writes up to the next call; the calls that may share a transaction up to the next
 * other item; or another delegated call on its own.
 */
function takeUnit(queue: Queued[]): Queued[] {
  const together = queue[0]?.kind === 'plant' ? (item?: Queued) => item?.kind === 'plant' : isShared;
  let size = 1;
  if (together(queue[0])) while (size < queue.length && size < MAX_BATCH && together(queue[size])) size++;
  return queue.splice(0, size);
}

export class GroupCommitWriter implements StoreWriter {
  private worker: Worker | undefined;
  private awaiting: Awaiting | undefined;
  private unitNumber = 0;
  private closed: Promise<void> | undefined;
  private readonly sharedCounts = { batches: 0, operations: 0 };
  private readonly batches = new Batcher<Queued>({ maxInFlight: 1, take: takeUnit, send: (batch) => this.send(batch) });

  constructor(
    private readonly workerData: WriterWorkerData,
    private readonly health?: SqliteHealth,
  ) {
    // Started now, not on the first write, so that write does not wait for it.
    this.worker = this.startWorker();
  }

  /** Resolves once the write is committed to disk. */
  write(write: PlantWrite): Promise<PlantWriteResult> {
    return new Promise((resolve, reject) => this.batches.add({ kind: 'plant', write, resolve, reject }));
  }

  /** Runs `store.method(...args)` in the writer thread, in turn with the plant writes. */
  call<S extends DelegatedStore, M extends DelegatedMethod<S>>(
    store: S,
    method: M,
    args: WriteArgs<S, M>,
  ): Promise<WriteResult<S, M>> {
    return new Promise((resolve, reject) => {
      const post = (worker: Worker, unit: number) =>
        worker.postMessage({ kind: 'call', unit, store, method, args } satisfies CallRequest<S, M>);
      const name = `${store}.${String(method)}`;
      const shared = SHARED_TRANSACTION_CALLS.has(name) ? { store, method: String(method), args } : undefined;
      // The writer thread answers a call with what S.M returned (writer-worker.ts runs
      // the same declaration); a structured clone cannot carry its type across.
      this.batches.add({
        kind: 'call',
        post,
        shared,
        resolve: (value) => resolve(value as WriteResult<S, M>),
        reject,
      });
    });
  }

  /**
   * A call a worker of this instance sent (src/cluster/primary-writes.ts), by name: it was type-checked where it
   * was made, and the writer thread dispatches it by the same names.
   */
  callUntyped(call: UntypedCall): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const post = (worker: Worker, unit: number) => worker.postMessage({ kind: 'call', unit, ...call });
      const shared = SHARED_TRANSACTION_CALLS.has(`${call.store}.${call.method}`) ? call : undefined;
      this.batches.add({ kind: 'call', post, shared, resolve, reject });
    });
  }

  /** Plant-write batches committed, and the plant writes they carried. */
  stats(): BatchCounts {
    return this.batches.stats();
  }

  /** Transactions of more than one SHARED_TRANSACTION_CALLS call, and the calls they carried. */
  sharedCallStats(): BatchCounts {
    return { ...this.sharedCounts };
  }

  /** Waits for the writes already accepted, then stops the writer thread. */
  close(): Promise<void> {
    this.closed ??= this.batches.close().then(() => this.stopWorker());
    return this.closed;
  }

  private send(batch: Queued[]): Promise<void> {
    const unit = ++this.unitNumber;
    this.worker ??= this.startWorker();
    // Referenced only while a unit is in flight: an idle writer never keeps the process alive.
    this.worker.ref();
    const head = batch[0];
    if (head?.kind === 'call' && batch.length === 1) {
      head.post(this.worker, unit);
    } else if (head?.kind === 'call') {
      const calls = batch
        .map((item) => (item.kind === 'call' ? item.shared : undefined))
        .filter((c) => c !== undefined);
      this.worker.postMessage({ kind: 'calls', unit, calls } satisfies CallsRequest);
    } else {
      const writes: PlantWrite[] = [];
      for (const item of batch) if (item.kind === 'plant') writes.push(item.write);
      this.worker.postMessage({ kind: 'plants', unit, writes } satisfies PlantsRequest);
    }
    return new Promise((done) => {
      this.awaiting = { unit, batch, done };
    });
  }

  private onReply(reply: WriterReply): void {
    const awaiting = this.awaiting;
    if (awaiting === undefined || reply.unit !== awaiting.unit) return;
    this.awaiting = undefined;
    this.worker?.unref();
    const { batch } = awaiting;
    this.health?.noteWrite(reply.ok ? undefined : reply.failure);
    if (!reply.ok) {
      const error = rebuildError(reply.failure);
      for (const item of batch) item.reject(error);
    } else if (batch[0]?.kind === 'call' && batch.length === 1) {
      batch[0].resolve(reply.value);
    } else if (batch[0]?.kind === 'call') {
      this.sharedCounts.batches += 1;
      this.sharedCounts.operations += batch.length;
      // One outcome per call, in order (writer-worker.ts).
      const settled = reply.value as SettledCall[];
      batch.forEach((item, i) => {
        const outcome = settled[i] as SettledCall;
        if (!outcome.ok) item.reject(rebuildError(outcome.failure));
        else if (item.kind === 'call') item.resolve(outcome.value);
      });
    } else {
      this.batches.counted(batch.length);
      // A plants unit is answered with one result per write, in order (batch-writer.ts).
      const results = reply.value as PlantWriteResult[];
      batch.forEach((item, i) => {
        if (item.kind === 'plant') item.resolve(results[i] as PlantWriteResult);
      });
    }
    // Writes that queued during the commit go at once: they have waited long enough.
    awaiting.done();
  }

  /**
   * The writer thread died: whether the unit in flight committed is unknown, so it and everything queued
   * fail as unavailable (a retry is safe: a committed create replays). The next unit starts a new thread.
   */
  private onWorkerFailure(worker: Worker, error: unknown): void {
    if (worker !== this.worker) return;
    this.worker = undefined;
    this.awaiting = undefined;
    const failure = new StoreUnavailableError('the SQLite writer thread stopped', { cause: error });
    this.health?.noteWrite({ message: failure.message, unavailable: true });
    this.batches.abort((batch) => {
      for (const item of batch) item.reject(failure);
    });
  }

  private startWorker(): Worker {
    const worker = spawnWorker('writer-worker', this.workerData);
    worker.unref();
    worker.on('message', (reply: WriterReply) => this.onReply(reply));
    worker.on('error', (error) => this.onWorkerFailure(worker, error));
    worker.on('exit', (code) => this.onWorkerFailure(worker, new Error(`writer thread exited with code ${code}`)));
    return worker;
  }

  private async stopWorker(): Promise<void> {
    const worker = this.worker;
    if (worker === undefined) return;
    this.worker = undefined; // its exit is now expected, not a failure
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.ref(); // so the process waits for the file to be closed cleanly
    worker.postMessage({ kind: 'close' } satisfies CloseRequest);
    await exited;
  }
}
