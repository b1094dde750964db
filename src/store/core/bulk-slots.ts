/**
 * Imports and exports hold a connection, a snapshot or a temp table for as long as they run; unbounded, a few
 * slow ones would take every connection or grow memory without limit. So a store runs a fixed number at once
 * and refuses one more as busy (503 with Retry-After).
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
