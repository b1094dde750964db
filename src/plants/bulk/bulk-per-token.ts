/**
 * How many imports and exports one token runs at once on this instance, held to
 * BULK_MAX_PER_TOKEN (429 TOO_MANY_BULK beyond). The store runs only a few at once
 * (store/core/bulk-slots.ts: 503 beyond), and an export runs at its reader's pace
 * for up to EXPORT_TIMEOUT_MS: without this, one client, slow by accident or on
 * purpose, could hold every slot and keep every other token's imports and exports
 * at 503.
 */
import { failure } from '../../http/errors.js';

export class BulkPerToken {
  private readonly running = new Map<string, number>();

  constructor(private readonly limit: number) {}

  /** Takes a place for the token, or throws TOO_MANY_BULK; the returned function gives it back (once). */
  take(tokenId: string): () => void {
    const count = this.running.get(tokenId) ?? 0;
    if (count >= this.limit) throw failure('TOO_MANY_BULK', [count]);
    this.running.set(tokenId, count + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (this.running.get(tokenId) ?? 1) - 1;
      if (left === 0) this.running.delete(tokenId);
      else this.running.set(tokenId, left);
    };
  }
}
