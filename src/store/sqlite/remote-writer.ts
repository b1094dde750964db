/**
 * A worker's writer in a multi-worker instance: the writes queued during one turn go to the primary in one
 * message, where they join its group commit with every other worker's (src/cluster/primary-writes.ts). The
 * primary keeps them in the order each worker sent them, so one worker's writes apply in order, as with
 * GroupCommitWriter.
 */
import { Batcher, type BatchCounts } from '../core/batcher.js';
import { StoreUnavailableError } from '../errors.js';
import type { SqliteHealth } from './health.js';
import type { RemoteWrite, StoreWriter, WriterChannel } from './store-writer.js';
import type {
  DelegatedMethod,
  DelegatedStore,
  PlantWrite,
  PlantWriteResult,
  WriteArgs,
  WriteFailure,
  WriteResult,
} from './writer-protocol.js';

/** Bounds one message, as MAX_BATCH bounds one transaction. */
const MAX_MESSAGE = 1024;
/** Messages in flight at once: the primary queues them in order, so more only adds memory. */
const MAX_IN_FLIGHT = 8;

interface Queued {
  readonly write: RemoteWrite;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

function rebuildError({ message, unavailable }: WriteFailure): Error {
  return unavailable ? new StoreUnavailableError(message) : new Error(message);
}

export class RemoteWriter implements StoreWriter {
  private readonly batches = new Batcher<Queued>({
    maxInFlight: MAX_IN_FLIGHT,
    take: (queue) => queue.splice(0, MAX_MESSAGE),
    send: (batch) => this.send(batch),
  });

  constructor(
    private readonly channel: WriterChannel,
    private readonly health?: SqliteHealth,
  ) {}

  write(write: PlantWrite): Promise<PlantWriteResult> {
    // The primary answers a plant write with its PlantWriteResult (primary-writes.ts).
    return this.queue({ kind: 'plant', write }) as Promise<PlantWriteResult>;
  }

  call<S extends DelegatedStore, M extends DelegatedMethod<S>>(
    store: S,
    method: M,
    args: WriteArgs<S, M>,
  ): Promise<WriteResult<S, M>> {
    // The primary's writer runs the same declaration (writer-protocol.ts); a structured clone cannot carry its type.
    return this.queue({ kind: 'call', store, method: String(method), args }) as Promise<WriteResult<S, M>>;
  }

  stats(): BatchCounts {
    return this.batches.stats();
  }

  /** Shared transactions are the primary's to count. */
  sharedCallStats(): BatchCounts {
    return { batches: 0, operations: 0 };
  }

  close(): Promise<void> {
    return this.batches.close();
  }

  private queue(write: RemoteWrite): Promise<unknown> {
    return new Promise((resolve, reject) => this.batches.add({ write, resolve, reject }));
  }

  private async send(batch: Queued[]): Promise<void> {
    try {
      const settled = await this.channel.send(batch.map((item) => item.write));
      const plants = batch.filter((item) => item.write.kind === 'plant').length;
      if (plants > 0) this.batches.counted(plants);
      batch.forEach((item, i) => {
        const outcome = settled[i];
        if (outcome === undefined) item.reject(new StoreUnavailableError('the SQLite writer gave no answer'));
        else if (outcome.ok) item.resolve(outcome.value);
        else {
          this.health?.noteWrite(outcome.failure);
          item.reject(rebuildError(outcome.failure));
        }
      });
      if (settled.some((outcome) => outcome.ok)) this.health?.noteWrite(undefined);
    } catch (error) {
      // The primary is gone (the instance is stopping): whether these committed is unknown, as when a writer thread
      // dies; a retry is safe (a committed create replays).
      const failure = new StoreUnavailableError("the instance's SQLite writer cannot be reached", { cause: error });
      for (const item of batch) item.reject(failure);
    }
  }
}
