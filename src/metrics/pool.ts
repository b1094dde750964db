/**
 * Connection-pool usage, for a store with a `poolStats()` method (PostgreSQL), read at scrape time so it
 * costs nothing per request.
 */
import { Gauge, type Registry } from 'prom-client';

export interface PoolStats {
  /** Connections open, busy or idle. */
  readonly total: number;
  /** Open connections not in use. */
  readonly idle: number;
  /** Callers queued for a connection because none was free. */
  readonly waiting: number;
}

export interface PoolStatsSource {
  poolStats(): PoolStats;
}

export function reportsPoolStats(store: object): store is PoolStatsSource {
  return typeof (store as Partial<PoolStatsSource>).poolStats === 'function';
}

/** Registers plantstore_store_pool_connections{state} when the store has a pool. */
export function registerPoolMetrics(registry: Registry, store: object): void {
  if (!reportsPoolStats(store)) return;
  new Gauge({
    name: 'plantstore_store_pool_connections',
    help: 'Database connection pool: total open connections, idle ones, and callers waiting for one.',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const stats = store.poolStats();
      this.labels('total').set(stats.total);
      this.labels('idle').set(stats.idle);
      this.labels('waiting').set(stats.waiting);
    },
  });
}
