/**
 * Rate-limit counters a multi-worker instance keeps in its primary, so a token has one budget per instance, not
 * one per worker: fixed windows, as @fastify/rate-limit's own in-process store counts them.
 */
import type { RateCount } from './protocol.js';

interface Window {
  current: number;
  startedAt: number;
}

export class RateCounts {
  private readonly windows = new Map<string, Window>();

  constructor(private readonly maxKeys = 10_000) {}

  count({ key, timeWindow }: RateCount, now = Date.now()): { current: number; ttl: number } {
    let window = this.windows.get(key);
    if (window === undefined || window.startedAt + timeWindow <= now) {
      window = { current: 0, startedAt: now };
      // The oldest key goes first when full, as in the library's LRU.
      if (!this.windows.has(key) && this.windows.size >= this.maxKeys) {
        const oldest = this.windows.keys().next();
        if (oldest.done !== true) this.windows.delete(oldest.value);
      }
    }
    window.current += 1;
    this.windows.delete(key);
    this.windows.set(key, window);
    return { current: window.current, ttl: window.startedAt + timeWindow - now };
  }
}
