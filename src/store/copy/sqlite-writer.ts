/**
 * Writing a copy's rows into SQLite: one prepared INSERT per table, run row by row inside the target's one
 * transaction (the commit is what costs). The search index and the change log's plant.created entries are
 * built from the copied rows in finish(), one statement each; subscriptions and deliveries get their rowid
 * from the row's seq, so lists keep their order.
 */
import type Database from 'better-sqlite3';
import { PLANT_CREATED, PLANT_DELETED } from '../../domain/events.js';
import { deletedPlantJsonSql } from '../../domain/plant-json.js';
import { PLANT_KEYS } from '../../domain/plant.js';
import { plantColumnsSql } from '../../domain/plant-sql.js';
import { APPEND_CHANGES } from '../sqlite/change-log-writes.js';
import { FIND_ROW_COLUMNS, findRow } from '../../domain/search-text.js';
import { findColumnsSql } from '../../domain/plant-find-sql.js';
import type { CopyRows, CopyTable } from './rows.js';

/** A row's parameters: positional, or named (an object). */
type Binder<Row> = (row: Row) => unknown[] | Readonly<Record<string, unknown>>;

interface TableWrite<Row> {
  readonly sql: string;
  readonly values: Binder<Row>;
}

const bool = (value: boolean) => (value ? 1 : 0);

const WRITES: { readonly [T in CopyTable]: TableWrite<CopyRows[T]> } = {
  // The target's migration made its own page-cursor secret: the source's replaces it, so cursors stay valid.
  store_secrets: {
    sql: 'INSERT INTO store_secrets (name, secret) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET secret = excluded.secret',
    values: (r) => [r.name, r.secret],
  },
  tokens: {
    sql: 'INSERT INTO tokens (id, name, secret_hash, scopes, created_at, expires_at, last_used_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    values: (r) => [
      r.id,
      r.name,
      r.secretHash,
      r.scopes.join(','),
      r.createdAt,
      r.expiresAt,
      r.lastUsedAt,
      r.revokedAt,
    ],
  },
  plants: {
    sql:
      `INSERT INTO plants (${plantColumnsSql()}, version, created_at, ${findColumnsSql()}) ` +
      `VALUES (${PLANT_KEYS.map((key) => `@${key}`).join(', ')}, ` +
      `@version, @createdAt, ${FIND_ROW_COLUMNS.map((column) => `@${column}`).join(', ')})`,
    // Named parameters, bound from the row and its find columns.
    values: (r) => ({ ...r, ...findRow(r) }),
  },
  webhook_subscriptions: {
    sql: `INSERT INTO webhook_subscriptions (rowid, id, url, description, secret, previous_secret, previous_secret_expires_at, event_types, created_at,
            version, enabled, disabled_at, disabled_reason, failing_since, max_per_second, throttle_last_at, throttle_count)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    values: (r) => [
      r.seq,
      r.id,
      r.url,
      r.description,
      r.secret,
      r.previousSecret,
      r.previousSecretExpiresAt,
      r.eventTypes.join(','),
      r.createdAt,
      r.version,
      bool(r.enabled),
      r.disabledAt,
      r.disabledReason,
      r.failingSince,
      r.maxPerSecond,
      r.throttleLastAt,
      r.throttleCount,
    ],
  },
  webhook_events: {
    sql: 'INSERT INTO webhook_events (id, type, payload, created_at) VALUES (?, ?, ?, ?)',
    values: (r) => [r.id, r.type, r.payload, r.createdAt],
  },
  webhook_deliveries: {
    sql: `INSERT INTO webhook_deliveries
            (rowid, id, event_id, subscription_id, status, attempt_count, manual, next_attempt_at, lease_owner, lease_until, created_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    values: (r) => [
      r.seq,
      r.id,
      r.eventId,
      r.subscriptionId,
      r.status,
      r.attemptCount,
      bool(r.manual),
      r.nextAttemptAt,
      r.leaseOwner,
      r.leaseUntil,
      r.createdAt,
    ],
  },
  webhook_delivery_attempts: {
    sql: `INSERT INTO webhook_delivery_attempts
            (id, delivery_id, attempt, attempted_at, response_status, latency_ms, error, response_body, response_content_type)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    values: (r) => [
      r.id,
      r.deliveryId,
      r.attempt,
      r.attemptedAt,
      r.responseStatus,
      r.latencyMs,
      r.error,
      r.responseBody,
      r.responseContentType,
    ],
  },
  webhook_recoveries: {
    sql: `INSERT INTO webhook_recoveries
            (id, subscription_id, window_key, since, until, status, requeued, cursor_at, cursor_id, created_at, updated_at, finished_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    values: (r) => [
      r.id,
      r.subscriptionId,
      r.windowKey,
      r.since,
      r.until,
      r.status,
      r.requeued,
      r.cursorAt,
      r.cursorId,
      r.createdAt,
      r.updatedAt,
      r.finishedAt,
    ],
  },
};

/** Children first: better-sqlite3 enforces foreign keys. */
const CLEAR_ORDER = [
  'webhook_recoveries',
  'webhook_delivery_attempts',
  'webhook_deliveries',
  'webhook_events',
  'webhook_subscriptions',
  'tokens',
  'plants',
] as const;

export class SqliteCopyWriter {
  private readonly statements = new Map<CopyTable, Database.Statement>();

  constructor(private readonly db: Database.Database) {}

  insert<T extends CopyTable>(table: T, rows: readonly CopyRows[T][]): void {
    const write: TableWrite<CopyRows[T]> = WRITES[table];
    let statement = this.statements.get(table);
    if (statement === undefined) {
      statement = this.db.prepare(write.sql);
      this.statements.set(table, statement);
    }
    for (const row of rows) statement.run(write.values(row));
  }

  /**
   * The plants it deletes go into the change log as deleted, as a DELETE of each would have them
   * (their payload the id alone, as domain/events.ts writes it). The search index is left as it is:
   * finish() rebuilds it, in the same transaction.
   */
  clear(): void {
    this.db
      .prepare(
        `${APPEND_CHANGES} SELECT '${PLANT_DELETED}', id, tag, ${deletedPlantJsonSql()}, ? FROM plants ORDER BY id`,
      )
      .run(Date.now());
    for (const table of CLEAR_ORDER) this.db.prepare(`DELETE FROM ${table}`).run();
  }

  /**
   * The search index and the change log's entries for the plants as copied (and only them),
   * and the log's history anew (migration 0012: the store now holds another store's plants,
   * and a stream client's position from before must not resume in it). Call it once, after the last plant.
   */
  finish(): void {
    this.db.prepare("INSERT INTO plants_search (plants_search) VALUES ('rebuild')").run();
    this.db
      .prepare(`${APPEND_CHANGES} SELECT '${PLANT_CREATED}', id, tag, json, ? FROM plants ORDER BY id`)
      .run(Date.now());
    this.db.prepare('UPDATE change_log_history SET history = lower(hex(randomblob(8)))').run();
  }

  raiseVersionCounter(last: bigint): void {
    this.db.prepare('UPDATE plant_version_counter SET last = max(last, ?)').run(last);
  }
}
