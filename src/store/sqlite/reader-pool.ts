/**
 * The reader threads, from the main thread: SQLITE_READERS of them (by default the usable cores), each with a
 * read-only connection, all started with the store so no read waits for a start. A read goes to an idle
 * thread, else the least queued, so a long search holds up only its own queue. A thread that dies fails its
 * reads as unavailable (safe to retry) and is restarted by the next read sent its way.
 */
import type { Worker } from 'node:worker_threads';
import { ReadTimeLimitError, StoreUnavailableError } from '../errors.js';
import type { SqliteHealth } from './health.js';
import type {
  ReaderCloseRequest,
  ReaderReply,
  ReadArgs,
  ReadFailure,
  ReadMethod,
  ReadRequest,
  ReadResult,
  ReadStore,
} from './reader-protocol.js';
import type { ReaderWorkerData } from './reader-worker.js';
import { spawnWorker } from './spawn-worker.js';

interface Pending {
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** One reader thread and the reads it was sent that have not been answered. */
interface Reader {
  readonly worker: Worker;
  readonly pending: Map<number, Pending>;
}

/** The reads of one thread, for a sequence of calls that must stay in it (an export's). */
export interface PinnedReader {
  call<S extends ReadStore, M extends ReadMethod<S>>(store: S, method: M, args: ReadArgs<S, M>): ReadPromise<S, M>;
}

type ReadPromise<S extends ReadStore, M extends ReadMethod<S>> = Promise<ReadResult<S, M>>;

const closing = () => new StoreUnavailableError('the store is closing');
const stopped = (cause?: unknown) => new StoreUnavailableError('the SQLite reader thread stopped', { cause });

function rebuildError({ message, unavailable, timeLimitMs }: ReadFailure): Error {
  if (timeLimitMs !== undefined) return new ReadTimeLimitError(timeLimitMs);
  return unavailable ? new StoreUnavailableError(message) : new Error(message);
}

export class ReaderPool {
  private readonly readers: (Reader | undefined)[];
  private unit = 0;
  private closing = false;

  constructor(
    private readonly workerData: ReaderWorkerData,
    size: number,
    private readonly health?: SqliteHealth,
  ) {
    this.readers = Array.from({ length: size }, () => this.start());
  }

  /** Runs `store.method(...args)` in the reader thread with the fewest reads waiting. */
  call<S extends ReadStore, M extends ReadMethod<S>>(store: S, method: M, args: ReadArgs<S, M>): ReadPromise<S, M> {
    return this.send(this.leastBusy(), store, method, args);
  }

  /** A reader whose calls all go to one thread, while it lives (a new one would not know the earlier calls). */
  pin(): PinnedReader {
    if (this.closing) return { call: () => Promise.reject(closing()) };
    const slot = this.leastBusy();
    const reader = this.readerAt(slot);
    return {
      call: (store, method, args) =>
        this.readers[slot] === reader ? this.send(slot, store, method, args) : Promise.reject(stopped()),
    };
  }

  /** Stops every thread; reads sent after this are refused. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(
      this.readers.map(async (reader, slot) => {
        if (reader === undefined) return;
        this.readers[slot] = undefined; // its exit is now expected, not a failure
        const exited = new Promise((resolve) => reader.worker.once('exit', resolve));
        reader.worker.ref(); // so the process waits for the connections to be closed cleanly
        reader.worker.postMessage({ kind: 'close' } satisfies ReaderCloseRequest);
        await exited;
        this.failAll(reader, closing());
      }),
    );
  }

  private send<S extends ReadStore, M extends ReadMethod<S>>(
    slot: number,
    store: S,
    method: M,
    args: ReadArgs<S, M>,
  ): Promise<ReadResult<S, M>> {
    if (this.closing) return Promise.reject(closing());
    const reader = this.readerAt(slot);
    const unit = ++this.unit;
    return new Promise((resolve, reject) => {
      // The reader thread answers with what S.M returned (reader-worker.ts runs the same
      // declaration); a structured clone cannot carry its type across.
      reader.pending.set(unit, { resolve: (value) => resolve(value as ReadResult<S, M>), reject });
      // Referenced only while it has reads to answer: idle readers never keep the process alive.
      reader.worker.ref();
      reader.worker.postMessage({ kind: 'read', unit, store, method, args } satisfies ReadRequest<S, M>);
    });
  }

  /** The slot for the next read: an idle thread's; else one whose thread died (a new one); else the least busy. */
  private leastBusy(): number {
    let best: number | undefined;
    let free: number | undefined;
    for (const [slot, reader] of this.readers.entries()) {
      if (reader === undefined) {
        free ??= slot;
      } else if (reader.pending.size === 0) {
        return slot;
      } else if (best === undefined || reader.pending.size < (this.readers[best]?.pending.size ?? 0)) {
        best = slot;
      }
    }
    return free ?? best ?? 0;
  }

  private readerAt(slot: number): Reader {
    let reader = this.readers[slot];
    if (reader === undefined) {
      reader = this.start();
      this.readers[slot] = reader;
    }
    return reader;
  }

  private start(): Reader {
    const worker = spawnWorker('reader-worker', this.workerData);
    worker.unref();
    const reader: Reader = { worker, pending: new Map() };
    worker.on('message', (reply: ReaderReply) => this.onReply(reader, reply));
    worker.on('error', (error) => this.onFailure(reader, error));
    worker.on('exit', (code) => this.onFailure(reader, new Error(`reader thread exited with code ${code}`)));
    return reader;
  }

  private onReply(reader: Reader, reply: ReaderReply): void {
    const pending = reader.pending.get(reply.unit);
    if (pending === undefined) return;
    reader.pending.delete(reply.unit);
    // Closing holds every thread until it exits: a late answer must not let the process end before then.
    if (reader.pending.size === 0 && !this.closing) reader.worker.unref();
    if (reply.ok) {
      pending.resolve(reply.value);
      return;
    }
    // A corrupt page met by a read makes the store unready, as one met by a write does (health.ts).
    this.health?.noteRead(reply.failure);
    pending.reject(rebuildError(reply.failure));
  }

  /** The thread died: its reads fail as unavailable, and its slot starts a new thread with its next read. */
  private onFailure(reader: Reader, error: unknown): void {
    const slot = this.readers.indexOf(reader);
    if (slot === -1) return;
    this.readers[slot] = undefined;
    this.failAll(reader, stopped(error));
  }

  private failAll(reader: Reader, error: Error): void {
    for (const { reject } of reader.pending.values()) reject(error);
    reader.pending.clear();
  }
}
