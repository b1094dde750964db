/**
 * The embedded store: one SQLite file under ./data, no set-up.
 *
 * Durability: WAL with synchronous=FULL, so every commit is fsync'd to the WAL before
 * the call returns: a 200 survives kill -9 and power loss alike. (synchronous=NORMAL
 * would survive kill -9 but could lose the last commits on power loss.)
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { Store } from '../types.js';
import { guarded } from './errors.js';
import { sqliteMigrations } from './migrations.js';
import { SqlitePlantStore } from './plant-store.js';
import { SqliteTokenStore } from './token-store.js';
import { SqliteWebhookStore } from './webhook-store.js';

export interface SqliteStoreOptions {
  /** File path, or ':memory:' (tests of non-durable behaviour only). */
  readonly path: string;
  readonly busyTimeoutMs?: number;
}

export class SqliteStore implements Store {
  readonly kind = 'sqlite';
  readonly plants: SqlitePlantStore;
  readonly tokens: SqliteTokenStore;
  readonly webhooks: SqliteWebhookStore;
  private readonly db: Database.Database;

  private constructor(db: Database.Database) {
    this.db = db;
    this.migrateNow();
    this.plants = new SqlitePlantStore(db);
    this.tokens = new SqliteTokenStore(db);
    this.webhooks = new SqliteWebhookStore(db);
  }

  /** Opens (creating if needed) the database file and applies pending migrations. */
  static open(options: SqliteStoreOptions): SqliteStore {
    if (options.path !== ':memory:') mkdirSync(dirname(options.path), { recursive: true });
    const db = guarded(() => new Database(options.path));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    return new SqliteStore(db);
  }

  async migrate(): Promise<void> {
    this.migrateNow();
  }

  /** BEGIN IMMEDIATE takes the write lock, so two processes never apply one migration twice. */
  private migrateNow(): void {
    guarded(() => {
      this.db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
      const applyPending = this.db.transaction(() => {
        const applied = new Set(
          this.db.prepare('SELECT version FROM schema_migrations').pluck().all() as number[],
        );
        for (const migration of sqliteMigrations) {
          if (applied.has(migration.version)) continue;
          this.db.exec(migration.sql);
          this.db
            .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
            .run(migration.version, migration.name, Date.now());
        }
      });
      applyPending.immediate();
    });
  }

  async ping(): Promise<void> {
    guarded(() => this.db.prepare('SELECT 1').get());
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
