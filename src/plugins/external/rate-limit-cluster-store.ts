/**
 * Rate-limit counters for a worker of a multi-worker instance without Redis: counted in the primary
 * (src/cluster/rate-counts.ts), so a token has one budget per instance, not one per worker.
 */
import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { PrimaryPeer } from '../app/cluster.js';

export function clusterRateLimitStore(primary: PrimaryPeer): FastifyRateLimitStoreCtor {
  class ClusterStore implements FastifyRateLimitStore {
    incr(
      key: string,
      callback: (error: Error | null, result?: { current: number; ttl: number }) => void,
      timeWindow: number,
      max: number,
    ): void {
      primary.ask('rate-count', { key, timeWindow, max }).then(
        (result) => callback(null, result),
        (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
      );
    }

    child(): FastifyRateLimitStore {
      return new ClusterStore();
    }
  }
  return ClusterStore;
}
