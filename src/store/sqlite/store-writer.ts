/**
 * What the SQLite stores write through: the writer thread of this process (group-commit.ts), or, in a worker of a
 * multi-worker instance, the primary process's writer (remote-writer.ts), so an instance keeps one writer.
 */
import type { BatchCounts } from '../core/batcher.js';
import type {
  DelegatedMethod,
  DelegatedStore,
  PlantWrite,
  PlantWriteResult,
  SettledCall,
  UntypedCall,
  WriteArgs,
  WriteResult,
} from './writer-protocol.js';

export interface StoreWriter {
  /** Resolves once the write is committed to disk. */
  write(write: PlantWrite): Promise<PlantWriteResult>;
  /** Runs `store.method(...args)` in the writer, in turn with the plant writes. */
  call<S extends DelegatedStore, M extends DelegatedMethod<S>>(
    store: S,
    method: M,
    args: WriteArgs<S, M>,
  ): Promise<WriteResult<S, M>>;
  /** Plant-write batches, and the plant writes they carried. */
  stats(): BatchCounts;
  /** Transactions of more than one shared call, and the calls they carried. */
  sharedCallStats(): BatchCounts;
  /** Waits for the writes already accepted, then stops. */
  close(): Promise<void>;
}

/** One write as it goes from a worker to the primary's writer. */
export type RemoteWrite =
  { readonly kind: 'plant'; readonly write: PlantWrite } | ({ readonly kind: 'call' } & UntypedCall);

/** How a worker reaches the primary's writer (src/cluster). */
export interface WriterChannel {
  /** Sends writes in order; resolves with one outcome each, in order, once they are committed (or refused). */
  send(writes: readonly RemoteWrite[]): Promise<SettledCall[]>;
  /** Calls `listener` whenever any worker's writes committed, so this process's change stream reads the log. */
  onCommitted(listener: () => void): void;
}
