/**
 * The embedded store: one SQLite file under ./data. The main thread's connection serves migrations and small
 * reads, reader threads the heavy plant reads, and the writer thread makes every write (group-commit.ts), with
 * WAL and synchronous=FULL so a 200 survives kill -9 and power loss.
 */
import { defaultSqliteReaders } from '../../config/index.js';
import type { BatchCounts } from '../core/batcher.js';
import type Database from 'better-sqlite3';
import type { Store } from '../types.js';
import { DEFAULT_BUSY_TIMEOUT_MS, openConnection } from './connection.js';
import { StoreUnavailableError } from '../errors.js';
import { guarded } from './errors.js';
import { DelegatingTokenStore, DelegatingWebhookStore } from './delegating-stores.js';
import { GroupCommitWriter } from './group-commit.js';
import { registerFindFunctions } from './find-functions.js';
import { SqliteHealth } from './health.js';
import { ReaderPool } from './reader-pool.js';
import { migrationsOf, pendingMigrations } from '../migrations.js';
import { applyPlantJsonColumn } from './plant-json-column.js';
import { SqlitePlantStore } from './plant-store.js';
import { ChangeSignal } from './change-log.js';
import { SqliteChangeLog } from './delegating-change-log.js';
import { RemoteWriter } from './remote-writer.js';
import type { StoreWriter, WriterChannel } from './store-writer.js';
import { SqliteTokenStore } from './token-store.js';
import { SqliteWebhookStore } from './webhook-store.js';

export interface SqliteStoreOptions {
  /** The database file (created if missing). */
  readonly path: string;
  readonly busyTimeoutMs?: number;
  /** Reader threads (SQLITE_READERS): by default one per core Node may use, at most 8. */
  readonly readers?: number;
  /** How long one read may run before it is stopped (READ_TIME_LIMIT_MS). */
  readonly readTimeLimitMs?: number;
  /**
   * Set in a worker of a multi-worker instance: writes go to the primary's writer, which migrated the file and
   * checks it; this process only reads it (src/cluster).
   */
  readonly writerChannel?: WriterChannel;
}

export const DEFAULT_READ_TIME_LIMIT_MS = 5000;

export class SqliteStore implements Store {
  readonly kind = 'sqlite';
  readonly plants: SqlitePlantStore;
  readonly tokens: DelegatingTokenStore;
  readonly webhooks: DelegatingWebhookStore;
  readonly changes: SqliteChangeLog;

  private constructor(
    private readonly db: Database.Database,
    private readonly writer: StoreWriter,
    private readonly readers: ReaderPool,
    private readonly health: SqliteHealth,
    signal: ChangeSignal,
  ) {
    this.plants = new SqlitePlantStore(db, writer, readers, health, signal);
    this.changes = new SqliteChangeLog(readers, writer, signal);
    this.tokens = new DelegatingTokenStore(new SqliteTokenStore(db), writer, health);
    this.webhooks = new DelegatingWebhookStore(new SqliteWebhookStore(db), writer, health, signal);
  }

  /** Opens (creating if needed) the database file, applies pending migrations and starts the writer thread. */
  static open(options: SqliteStoreOptions): SqliteStore {
    // The writer thread needs a file it can open too: an in-memory database is private to one connection.
    if (options.path === ':memory:' || options.path === '') throw new Error('the SQLite store needs a file path');
    const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
    const db = openConnection(options.path, busyTimeoutMs);
    const channel = options.writerChannel;
    try {
      if (channel === undefined) migrate(db);
    } catch (error) {
      db.close();
      throw error;
    }
    const health = new SqliteHealth(options.path);
    const signal = new ChangeSignal();
    let writer: StoreWriter;
    if (channel === undefined) {
      // Started after the migrations, so the writer finds the tables it prepares statements for.
      const own = new GroupCommitWriter({ path: options.path, busyTimeoutMs }, health);
      // In the writer thread, so start-up does not wait for it; readiness does (health.ts).
      own.call('maintenance', 'quickCheck', []).then(
        (findings) => health.checked(findings),
        (error: unknown) => health.checkFailed(error),
      );
      writer = own;
    } else {
      // The primary checked the file before it started this worker, and its readiness covers the check.
      health.checked(['ok']);
      channel.onCommitted(() => signal.fire());
      writer = new RemoteWriter(channel, health);
    }
    const readers = new ReaderPool(
      { path: options.path, busyTimeoutMs, timeLimitMs: options.readTimeLimitMs ?? DEFAULT_READ_TIME_LIMIT_MS },
      options.readers ?? defaultSqliteReaders(),
      health,
    );
    return new SqliteStore(db, writer, readers, health, signal);
  }

  /** How many plant writes have been committed in how many batches. */
  groupCommitStats(): BatchCounts {
    return this.writer.stats();
  }

  /** The same, for /metrics (src/metrics/batches.ts). */
  batchStats(): Record<string, BatchCounts> {
    return { write: this.writer.stats(), attempts: this.writer.sharedCallStats() };
  }

  async migrate(): Promise<void> {
    migrate(this.db);
  }

  async ping(): Promise<void> {
    guarded(() => this.db.prepare('SELECT 1').get());
    // Its outcome reaches the health through the writer, like any write's.
    if (this.health.shouldProbe()) await this.writer.call('maintenance', 'probeWrite', []).catch(() => undefined);
    const problem = this.health.problem();
    if (problem !== undefined) throw new StoreUnavailableError(problem);
  }

  /** The writer a multi-worker instance's primary shares with its workers (src/cluster/primary-writes.ts). */
  sharedWriter(): GroupCommitWriter | undefined {
    return this.writer instanceof GroupCommitWriter ? this.writer : undefined;
  }

  /** Waits for accepted writes to commit, then closes every connection and stops the threads. */
  async close(): Promise<void> {
    await Promise.all([this.writer.close(), this.readers.close()]);
    if (this.db.open) this.db.close();
  }
}

/**
 * Applies the pending migrations, up to version `through` (all by default; the
 * migration tests stop earlier to build an older store). BEGIN IMMEDIATE takes the
 * write lock, so two processes never apply one migration twice.
 */
export function migrate(db: Database.Database, through = Number.POSITIVE_INFINITY): void {
  guarded(() => {
    db.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)',
    );
    registerFindFunctions(db);
    const applyPending = db.transaction(() => {
      const applied = db.prepare('SELECT version FROM schema_migrations').pluck().all() as number[];
      let count = 0;
      for (const migration of pendingMigrations(migrationsOf('sqlite'), applied, `at ${db.name}`)) {
        if (migration.version > through) continue;
        db.exec(migration.sql);
        db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
          migration.version,
          migration.name,
          Date.now(),
        );
        count += 1;
      }
      // The json column follows the definition (plant-json-column.ts) once the store has every migration.
      if (through >= (migrationsOf('sqlite').at(-1)?.version ?? 0) && applyPlantJsonColumn(db)) count += 1;
      return count;
    });
    // A migration that rewrites a table leaves a WAL as large as the table, and SQLite never shrinks a WAL:
    // truncate it now, once (with another process reading, a later checkpoint does it).
    if (applyPending.immediate() > 0) db.pragma('wal_checkpoint(TRUNCATE)');
  });
}
