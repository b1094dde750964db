/**
 * The change log for the main thread: reads run in the reader threads, pruning in the writer thread.
 * Apart from change-log.ts, which the threads' protocols import: together they made an import cycle.
 */
import type { ChangeLog, ChangeLogBounds, PlantChangeEntry } from '../types.js';
import type { ChangeSignal } from './change-log.js';
import type { StoreWriter } from './store-writer.js';
import type { ReaderPool } from './reader-pool.js';

export class SqliteChangeLog implements ChangeLog {
  constructor(
    private readonly readers: ReaderPool,
    private readonly writer: StoreWriter,
    private readonly signal: ChangeSignal,
  ) {}

  after(position: bigint, limit: number): Promise<PlantChangeEntry[]> {
    return this.readers.call('changes', 'after', [position, limit]);
  }

  bounds(): Promise<ChangeLogBounds> {
    return this.readers.call('changes', 'bounds', []);
  }

  watch(listener: () => void): () => void {
    return this.signal.add(listener);
  }

  prune(before: Date, limit: number): Promise<number> {
    return this.writer.call('changes', 'prune', [before.getTime(), limit]);
  }
}
