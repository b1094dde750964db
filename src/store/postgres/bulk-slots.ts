/**
 * Imports and exports each hold one connection of the pool for as long as they
 * run (a transaction, a snapshot): without a bound, a few concurrent ones would take
 * every connection and starve ordinary requests. So at most half the pool (at least
 * one) serves them at once; one more is refused as the store being busy (503 with
 * Retry-After), to be retried.
 */
import { StoreUnavailableError } from '../errors.js';

export function bulkSlotsFor(poolSize: number): number {
  return Math.max(1, Math.floor(poolSize / 2));
}

export class BulkSlots {
  private inUse = 0;

  constructor(private readonly limit: number) {}

  /** Takes a slot, or refuses; the returned function gives it back (once). */
  take(): () => void {
    if (this.inUse >= this.limit) {
      throw new StoreUnavailableError(`PostgreSQL store busy: ${this.limit} imports and exports are running on this instance, the most it runs at once`);
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
