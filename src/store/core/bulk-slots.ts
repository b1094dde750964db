/**
 * Imports and exports each hold resources for as long as they run: on PostgreSQL a
 * connection of the pool (a transaction, a snapshot); on SQLite an export's own
 * connection with its page cache and read snapshot (which also keeps the WAL from
 * being checkpointed past it), an import's temp table in the writer thread. Without
 * a bound, a few concurrent or slowly read ones would take every connection or grow
 * the memory without limit. So a store runs at most a fixed number at once; one
 * more is refused as the store being busy (503 with Retry-After), to be retried.
 */
import { StoreUnavailableError } from '../errors.js';

/** PostgreSQL: half the pool (at least one), so the rest stays for ordinary requests. */
export function bulkSlotsFor(poolSize: number): number {
  return Math.max(1, Math.floor(poolSize / 2));
}

export class BulkSlots {
  private inUse = 0;

  constructor(private readonly limit: number) {}

  /** Takes a slot, or refuses; the returned function gives it back (once). */
  take(): () => void {
    if (this.inUse >= this.limit) {
      throw new StoreUnavailableError(
        `store busy: ${this.limit} imports and exports are running on this instance, the most it runs at once`,
      );
    }
    this.inUse += 1;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.inUse -= 1;
    };
  }
}
