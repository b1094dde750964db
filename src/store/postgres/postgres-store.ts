/**
 * The shared store: PostgreSQL, for any number of stateless instances, behaving exactly as the SQLite store.
 * A 200 follows the commit (flushed to the WAL with synchronous_commit on). Connection-level failures surface
 * as StoreUnavailableError (503); the pool replaces broken connections, so the store recovers by itself.
 */
import type { BatchCounts } from '../core/batcher.js';
import type pg from 'pg';
import { StoreUnavailableError } from '../errors.js';
import type { Store } from '../types.js';
import { batchesInFlightFor } from './keyed-batcher.js';
import { guarded } from './errors.js';
import { migrate } from './migrator.js';
import { migrationsOf } from '../migrations.js';
import { PostgresPlantStore } from './plant-store.js';
import { PostgresChangeLog } from './change-log.js';
import { BulkSlots, bulkSlotsFor } from '../core/bulk-slots.js';
import { createPool, DEFAULT_POSTGRES_SETTINGS, type PostgresConnectionSettings } from './pool.js';
import { readBatchesInFlightFor, type ReadBatchStats } from './read-batcher.js';
import { PostgresTokenStore } from './token-store.js';
import { PostgresWebhookStore } from './webhook-store.js';
import { checkSessions } from './session-check.js';

/** How long a create batch waits for a row another transaction holds: far above a commit, far below the timeout. */
const CREATE_BATCH_LOCK_WAIT_MS = 200;

export interface PostgresStoreOptions extends Partial<Omit<PostgresConnectionSettings, 'url' | 'listenUrl'>> {
  /** DATABASE_LISTEN_URL: where the change log's LISTEN session goes (by default `url`). */
  readonly listenUrl?: string | undefined;
  readonly url: string;
  /** Told about connections that broke while idle (the pool has replaced them already). */
  readonly onBackgroundError?: (error: Error) => void;
}

export class PostgresStore implements Store {
  readonly kind = 'postgres';
  readonly plants: PostgresPlantStore;
  readonly tokens: PostgresTokenStore;
  readonly webhooks: PostgresWebhookStore;
  readonly changes: PostgresChangeLog;
  private readonly pool: pg.Pool;
  /** Batches of several creates (see PostgresPlantStore's insertBatch): one connection per create batch in flight. */
  private readonly createBatchPool: pg.Pool;
  private closed = false;

  private constructor(
    private readonly settings: PostgresConnectionSettings,
    onBackgroundError: (error: Error) => void,
  ) {
    // Creates and changes each get this many batches in flight; reads what is left.
    const writeBatches = batchesInFlightFor(settings.poolSize);
    this.pool = createPool(settings, onBackgroundError);
    this.createBatchPool = createPool(
      { ...settings, poolSize: writeBatches },
      onBackgroundError,
      CREATE_BATCH_LOCK_WAIT_MS,
    );
    this.plants = new PostgresPlantStore(
      this.pool,
      writeBatches,
      readBatchesInFlightFor(settings.poolSize, 2 * writeBatches),
      new BulkSlots(bulkSlotsFor(settings.poolSize)),
      this.createBatchPool,
    );
    this.tokens = new PostgresTokenStore(this.pool);
    this.webhooks = new PostgresWebhookStore(this.pool);
    this.changes = new PostgresChangeLog(this.pool, settings, onBackgroundError);
  }

  /** Connects, applies pending migrations and returns the store; rejects (StoreUnavailableError when the server cannot
   * be reached) otherwise. */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const settings: PostgresConnectionSettings = {
      url: options.url,
      poolSize: options.poolSize ?? DEFAULT_POSTGRES_SETTINGS.poolSize,
      statementTimeoutMs: options.statementTimeoutMs ?? DEFAULT_POSTGRES_SETTINGS.statementTimeoutMs,
      connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_POSTGRES_SETTINGS.connectTimeoutMs,
      idleTimeoutMs: options.idleTimeoutMs ?? DEFAULT_POSTGRES_SETTINGS.idleTimeoutMs,
      pooler: options.pooler ?? DEFAULT_POSTGRES_SETTINGS.pooler,
      ...(options.listenUrl === undefined ? {} : { listenUrl: options.listenUrl }),
    };
    // Before anything else: a set-up that would misbehave silently is refused, naming the setting.
    await checkSessions(settings);
    const store = new PostgresStore(settings, options.onBackgroundError ?? (() => {}));
    try {
      await store.migrate();
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  async migrate(): Promise<void> {
    await guarded(() => migrate(this.settings, migrationsOf('postgres')));
  }

  /** Ready means able to write: a read-only server (a standby reached during a failover) counts as unavailable. */
  async ping(): Promise<void> {
    const readOnly = await guarded(
      async () =>
        (
          await this.pool.query<{ read_only: string }>({
            name: 'ping',
            text: "SELECT current_setting('transaction_read_only') AS read_only",
          })
        ).rows[0]?.read_only,
    );
    if (readOnly === 'on')
      throw new StoreUnavailableError(
        'PostgreSQL store unavailable (the server is read-only: a standby, or default_transaction_read_only is on)',
      );
  }

  /** Pool usage, read by the metrics endpoint when it is scraped. */
  poolStats(): { total: number; idle: number; waiting: number } {
    const pools = [this.pool, this.createBatchPool];
    const sum = (count: (pool: pg.Pool) => number) => pools.reduce((total, pool) => total + count(pool), 0);
    return {
      total: sum((pool) => pool.totalCount),
      idle: sum((pool) => pool.idleCount),
      waiting: sum((pool) => pool.waitingCount),
    };
  }

  /** How creates are being grouped into batch statements (see create-batcher.ts). */
  createBatchStats(): BatchCounts {
    return this.plants.createBatchStats();
  }

  /** How changes are being grouped into batch statements (see update-batcher.ts). */
  updateBatchStats(): BatchCounts {
    return this.plants.updateBatchStats();
  }

  /** How point reads are being grouped into batch statements (see read-batcher.ts). */
  readBatchStats(): ReadBatchStats {
    return this.plants.readBatchStats();
  }

  /** All of them, for /metrics (src/metrics/batches.ts). */
  batchStats(): Record<string, BatchCounts> {
    const { batches, operations } = this.readBatchStats();
    return { create: this.createBatchStats(), update: this.updateBatchStats(), read: { batches, operations } };
  }

  /** Writes and reads already accepted are answered (or failed) first, then the pool closes. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Synchronously, so a write made right after close() is refused.
    this.changes.close();
    await Promise.all([this.plants.closeWrites(), this.plants.closeReads()]);
    await Promise.all([this.pool.end(), this.createBatchPool.end()]);
  }
}
