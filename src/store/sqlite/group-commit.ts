/**
 * Group commit: the main thread's side of the writer thread (writer-worker.ts).
 *
 * A durable commit costs an fsync (a fraction of a millisecond to several), and
 * SQLite has one writer at a time: committing every create on its own caps creates
 * at one per fsync. Instead, plant writes that arrive while a batch is being
 * committed wait together and go to the writer thread as the next batch: one
 * transaction, one fsync. Each write's promise settles only when its batch's reply
 * arrives, i.e. after the batch is committed to disk (or failed as a whole).
 *
 * One unit (a batch, or one delegated token/webhook write) is in flight at a time,
 * so writes are applied in the order they arrived and never race each other for
 * the write lock.
 */
import type { Worker } from 'node:worker_threads';
import { StoreUnavailableError } from '../errors.js';
import { spawnWorker } from './spawn-worker.js';
import type { WriterWorkerData } from './writer-worker.js';
import type { DelegatedStore, PlantWrite, PlantWriteResult, WriteFailure, WriterReply, WriterRequest } from './writer-protocol.js';

/** Bounds one transaction's size, so one batch never holds the write lock for long. */
const MAX_BATCH = 1024;

interface Settle {
  readonly resolve: (value: never) => void;
  readonly reject: (error: unknown) => void;
}

type Queued =
  | ({ readonly kind: 'plant'; readonly write: PlantWrite } & Settle)
  | ({ readonly kind: 'call'; readonly store: DelegatedStore; readonly method: string; readonly args: readonly unknown[] } & Settle);

function rebuildError({ message, unavailable }: WriteFailure): Error {
  return unavailable ? new StoreUnavailableError(message) : new Error(message);
}

/** Counters since the store opened: how well writes are being grouped. */
export interface GroupCommitStats {
  /** Plant-write batches committed so far. */
  readonly batches: number;
  /** Plant writes in those batches. */
  readonly plantWrites: number;
}

export class GroupCommitWriter {
  private worker: Worker | undefined;
  private counters = { batches: 0, plantWrites: 0 };
  private queue: Queued[] = [];
  private inFlight: Queued[] | undefined;
  private unitNumber = 0;
  private flushScheduled = false;
  private closing: Promise<void> | undefined;
  private whenIdle: (() => void) | undefined;

  constructor(private readonly workerData: WriterWorkerData) {
    // Started now, not on the first write, so that write does not wait for it.
    this.worker = this.startWorker();
  }

  /** Resolves once the write is committed to disk. */
  write(write: PlantWrite): Promise<PlantWriteResult> {
    return this.enqueue((settle) => ({ kind: 'plant', write, ...settle }));
  }

  /** Runs `store.method(...args)` in the writer thread, in turn with the plant writes. */
  call<T>(store: DelegatedStore, method: string, args: readonly unknown[]): Promise<T> {
    return this.enqueue((settle) => ({ kind: 'call', store, method, args, ...settle }));
  }

  stats(): GroupCommitStats {
    return { ...this.counters };
  }

  /** Waits for the writes already accepted, then stops the writer thread. */
  close(): Promise<void> {
    this.closing ??= this.drain().then(() => this.stopWorker());
    return this.closing;
  }

  private enqueue<T>(item: (settle: Settle) => Queued): Promise<T> {
    if (this.closing !== undefined) return Promise.reject(new StoreUnavailableError('the store is closing'));
    return new Promise<T>((resolve, reject) => {
      this.queue.push(item({ resolve: resolve as (value: never) => void, reject }));
      this.scheduleFlush();
    });
  }

  /**
   * setImmediate rather than sending at once: the writes of every request parsed in
   * this turn of the event loop then share the first batch.
   */
  private scheduleFlush(): void {
    if (this.inFlight !== undefined || this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  /** Sends the next unit: a delegated call on its own, or the plant writes up to the next call. */
  private flush(): void {
    if (this.inFlight !== undefined) return;
    const head = this.queue[0];
    if (head === undefined) {
      this.whenIdle?.();
      return;
    }
    let size = 1;
    if (head.kind === 'plant') {
      while (size < this.queue.length && size < MAX_BATCH && this.queue[size]?.kind === 'plant') size++;
    }
    const unit = this.queue.splice(0, size);
    const request: WriterRequest =
      head.kind === 'call'
        ? { kind: 'call', unit: ++this.unitNumber, store: head.store, method: head.method, args: head.args }
        : { kind: 'plants', unit: ++this.unitNumber, writes: unit.map((item) => (item as { write: PlantWrite }).write) };
    this.inFlight = unit;
    this.worker ??= this.startWorker();
    // Referenced only while a unit is in flight: an idle writer never keeps the process alive.
    this.worker.ref();
    this.worker.postMessage(request);
  }

  private onReply(reply: WriterReply): void {
    const unit = this.inFlight;
    if (unit === undefined || reply.unit !== this.unitNumber) return;
    this.inFlight = undefined;
    this.worker?.unref();
    if (!reply.ok) {
      const error = rebuildError(reply.failure);
      for (const item of unit) item.reject(error);
    } else if (unit[0]?.kind === 'call') {
      unit[0].resolve(reply.value as never);
    } else {
      this.counters.batches++;
      this.counters.plantWrites += unit.length;
      const results = reply.value as PlantWriteResult[];
      unit.forEach((item, i) => item.resolve(results[i] as never));
    }
    // Writes that queued during the commit go at once: they have waited long enough.
    this.flush();
  }

  /**
   * The writer thread died (it could not open the file, or a bug): whether the unit
   * in flight was committed is unknown, so its writes fail as unavailable (a client's
   * retry is safe: a committed create replays). A new thread starts with the next unit.
   */
  private onWorkerFailure(worker: Worker, error: unknown): void {
    if (worker !== this.worker) return;
    this.worker = undefined;
    const failure = new StoreUnavailableError('the SQLite writer thread stopped', { cause: error });
    const lost = [...(this.inFlight ?? []), ...this.queue];
    this.inFlight = undefined;
    this.queue = [];
    for (const item of lost) item.reject(failure);
    this.whenIdle?.();
  }

  private startWorker(): Worker {
    const worker = spawnWorker('writer-worker', this.workerData);
    worker.unref();
    worker.on('message', (reply: WriterReply) => this.onReply(reply));
    worker.on('error', (error) => this.onWorkerFailure(worker, error));
    worker.on('exit', (code) => this.onWorkerFailure(worker, new Error(`writer thread exited with code ${code}`)));
    return worker;
  }

  private drain(): Promise<void> {
    if (this.inFlight === undefined && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.whenIdle = () => {
        if (this.inFlight === undefined && this.queue.length === 0) resolve();
      };
    });
  }

  private async stopWorker(): Promise<void> {
    const worker = this.worker;
    if (worker === undefined) return;
    this.worker = undefined; // its exit is now expected, not a failure
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.ref(); // so the process waits for the file to be closed cleanly
    worker.postMessage({ kind: 'close' } satisfies WriterRequest);
    await exited;
  }
}
