/**
 * Batches per kind and the operations they carried: their ratio says whether group commit (SQLite) or
 * statement batching (PostgreSQL) pays off under real traffic. Read from the store's `batchStats()` at
 * scrape time, never per request.
 */
import { Counter, type Registry } from 'prom-client';
import type { BatchCounts } from '../store/core/batcher.js';

export type { BatchCounts } from '../store/core/batcher.js';

export interface BatchStatsSource {
  batchStats(): Readonly<Record<string, BatchCounts>>;
}

export function reportsBatchStats(store: object): store is BatchStatsSource {
  return typeof (store as Partial<BatchStatsSource>).batchStats === 'function';
}

/**
 * A Prometheus counter mirroring one field of the store's counts. They only grow, so
 * at each scrape the counter is advanced by what they grew since the last one.
 */
function mirrorCounter(
  registry: Registry,
  source: BatchStatsSource,
  field: keyof BatchCounts,
  name: string,
  help: string,
): void {
  const seen = new Map<string, number>();
  new Counter({
    name,
    help,
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      for (const [kind, counts] of Object.entries(source.batchStats())) {
        const grown = counts[field] - (seen.get(kind) ?? 0);
        this.labels(kind).inc(Math.max(grown, 0)); // inc(0) makes the series exist from the first scrape
        seen.set(kind, counts[field]);
      }
    },
  });
}

/** Registers plantstore_store_batches_total{kind} and plantstore_store_batched_operations_total{kind}. */
export function registerBatchMetrics(registry: Registry, store: object): void {
  if (!reportsBatchStats(store)) return;
  mirrorCounter(
    registry,
    store,
    'batches',
    'plantstore_store_batches_total',
    "Batches the store ran, by kind: write (SQLite plant writes per fsync'd transaction), create, update and read (PostgreSQL statements).",
  );
  mirrorCounter(
    registry,
    store,
    'operations',
    'plantstore_store_batched_operations_total',
    'Operations carried by the batches in plantstore_store_batches_total, by kind of batch.',
  );
}
