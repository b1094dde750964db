/**
 * Writing a copy's rows into PostgreSQL: one INSERT .. SELECT FROM unnest(...) per chunk and table, int8 and
 * times as text (exact). Lists travel comma-joined and are split by the statement: unnest cannot yield an
 * array per row. Identity columns are written as they were (OVERRIDING SYSTEM VALUE), and finish() moves
 * their sequences past them.
 */
import type pg from 'pg';
import { FIND_ROW_COLUMNS, findRow } from '../../domain/search-text.js';
import { findColumnsSql } from '../../domain/plant-find-sql.js';
import { PLANT_KEYS } from '../../domain/plant.js';
import { PLANT_POSTGRES_TYPES, plantColumnsSql } from '../../domain/plant-sql.js';
import type { CopyRows, CopyTable } from './rows.js';

type Cell = string | number | boolean | null;

interface TableWrite<Row> {
  readonly sql: string;
  readonly columns: (row: Row) => Cell[];
}

const time = (ms: number): string => new Date(ms).toISOString();
const timeOrNull = (ms: number | null): string | null => (ms === null ? null : time(ms));

/** `unnest($1::t1[], $2::t2[], ...) AS r(name1, name2, ...)` for the columns given as `name type`. */
function unnest(columns: string): string {
  const pairs = columns.split(',').map((column) => column.trim().split(' '));
  const arrays = pairs.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ');
  return `unnest(${arrays}) AS r(${pairs.map(([name]) => name).join(', ')})`;
}

/** The plant's fields as `name type` pairs, in PLANT_KEYS order. */
const PLANT_COLUMN_TYPES = PLANT_KEYS.map((key) => `${key} ${PLANT_POSTGRES_TYPES[key]}`).join(', ');

/** The rest of a plant's row. */
const PLANT_ROW_TYPES = `version int8, created_at timestamptz, ${FIND_ROW_COLUMNS.map((column) => `${column} text`).join(', ')}`;

const WRITES: { readonly [T in CopyTable]: TableWrite<CopyRows[T]> } = {
  // The target's migration made its own page-cursor secret: the source's replaces it, so cursors stay valid.
  store_secrets: {
    sql: `INSERT INTO store_secrets (name, secret) SELECT * FROM ${unnest('name text, secret text')}
          ON CONFLICT (name) DO UPDATE SET secret = excluded.secret`,
    columns: (r) => [r.name, r.secret],
  },
  tokens: {
    sql: `INSERT INTO tokens (id, name, secret_hash, scopes, created_at, expires_at, last_used_at, revoked_at)
          SELECT id, name, secret_hash, string_to_array(scopes, ','), created_at, expires_at, last_used_at, revoked_at
          FROM ${unnest('id text, name text, secret_hash text, scopes text, created_at timestamptz, expires_at timestamptz, last_used_at timestamptz, revoked_at timestamptz')}`,
    columns: (r) => [
      r.id,
      r.name,
      r.secretHash,
      r.scopes.join(','),
      time(r.createdAt),
      timeOrNull(r.expiresAt),
      timeOrNull(r.lastUsedAt),
      timeOrNull(r.revokedAt),
    ],
  },
  plants: {
    sql: `INSERT INTO plants (${plantColumnsSql()}, version, created_at, ${findColumnsSql()})
          SELECT * FROM ${unnest(`${PLANT_COLUMN_TYPES}, ${PLANT_ROW_TYPES}`)}`,
    columns: (r) => {
      const find = findRow(r);
      const fields = PLANT_KEYS.map((key) => (key === 'id' ? r.id.toString() : r[key]));
      return [...fields, r.version.toString(), time(r.createdAt), ...FIND_ROW_COLUMNS.map((column) => find[column])];
    },
  },
  webhook_subscriptions: {
    sql: `INSERT INTO webhook_subscriptions (seq, id, url, description, secret, previous_secret, previous_secret_expires_at, event_types, created_at,
            version, enabled, disabled_at, disabled_reason, failing_since, max_per_second, throttle_last_at, throttle_count)
          OVERRIDING SYSTEM VALUE
          SELECT seq, id, url, description, secret, previous_secret, previous_secret_expires_at, string_to_array(event_types, ','), created_at,
            version, enabled, disabled_at, disabled_reason, failing_since, max_per_second, throttle_last_at, throttle_count
          FROM ${unnest(
            'seq int8, id text, url text, description text, secret text, previous_secret text, previous_secret_expires_at timestamptz, event_types text, created_at timestamptz, ' +
              'version int4, enabled bool, disabled_at timestamptz, disabled_reason text, failing_since timestamptz, ' +
              'max_per_second int4, throttle_last_at timestamptz, throttle_count int4',
          )}`,
    columns: (r) => [
      r.seq.toString(),
      r.id,
      r.url,
      r.description,
      r.secret,
      r.previousSecret,
      timeOrNull(r.previousSecretExpiresAt),
      r.eventTypes.join(','),
      time(r.createdAt),
      r.version,
      r.enabled,
      timeOrNull(r.disabledAt),
      r.disabledReason,
      timeOrNull(r.failingSince),
      r.maxPerSecond,
      timeOrNull(r.throttleLastAt),
      r.throttleCount,
    ],
  },
  webhook_events: {
    sql: `INSERT INTO webhook_events (id, type, payload, created_at) SELECT * FROM ${unnest('id text, type text, payload text, created_at timestamptz')}`,
    columns: (r) => [r.id, r.type, r.payload, time(r.createdAt)],
  },
  webhook_deliveries: {
    sql: `INSERT INTO webhook_deliveries (seq, id, event_id, subscription_id, status, attempt_count, manual, next_attempt_at, lease_owner, lease_until, created_at)
          OVERRIDING SYSTEM VALUE
          SELECT * FROM ${unnest(
            'seq int8, id text, event_id text, subscription_id text, status text, attempt_count int4, manual bool, next_attempt_at timestamptz, lease_owner text, lease_until timestamptz, created_at timestamptz',
          )}`,
    columns: (r) => [
      r.seq.toString(),
      r.id,
      r.eventId,
      r.subscriptionId,
      r.status,
      r.attemptCount,
      r.manual,
      timeOrNull(r.nextAttemptAt),
      r.leaseOwner,
      timeOrNull(r.leaseUntil),
      time(r.createdAt),
    ],
  },
  webhook_delivery_attempts: {
    sql: `INSERT INTO webhook_delivery_attempts (id, delivery_id, attempt, attempted_at, response_status, latency_ms, error, response_body, response_content_type)
          OVERRIDING SYSTEM VALUE
          SELECT * FROM ${unnest(
            'id int8, delivery_id text, attempt int4, attempted_at timestamptz, response_status int4, latency_ms int4, error text, response_body text, response_content_type text',
          )}`,
    columns: (r) => [
      r.id.toString(),
      r.deliveryId,
      r.attempt,
      time(r.attemptedAt),
      r.responseStatus,
      r.latencyMs,
      r.error,
      r.responseBody,
      r.responseContentType,
    ],
  },
  webhook_recoveries: {
    sql: `INSERT INTO webhook_recoveries (id, subscription_id, window_key, since, until, status, requeued, cursor_at, cursor_id, created_at, updated_at, finished_at)
          SELECT * FROM ${unnest(
            'id text, subscription_id text, window_key text, since timestamptz, until timestamptz, status text, requeued int4, cursor_at timestamptz, cursor_id text, created_at timestamptz, updated_at timestamptz, finished_at timestamptz',
          )}`,
    columns: (r) => [
      r.id,
      r.subscriptionId,
      r.windowKey,
      time(r.since),
      time(r.until),
      r.status,
      r.requeued,
      timeOrNull(r.cursorAt),
      r.cursorId,
      time(r.createdAt),
      time(r.updatedAt),
      timeOrNull(r.finishedAt),
    ],
  },
};

/** The identity columns the copy writes, whose sequences must then hand out higher values. */
const IDENTITIES = [
  ['webhook_subscriptions', 'seq'],
  ['webhook_deliveries', 'seq'],
  ['webhook_delivery_attempts', 'id'],
] as const;

/** Children first, for the foreign keys. */
const CLEAR_ORDER = [
  'webhook_recoveries',
  'webhook_delivery_attempts',
  'webhook_deliveries',
  'webhook_events',
  'webhook_subscriptions',
  'tokens',
  'plants',
] as const;

export class PostgresCopyWriter {
  constructor(private readonly client: pg.Client) {}

  async insert<T extends CopyTable>(table: T, rows: readonly CopyRows[T][]): Promise<void> {
    if (rows.length === 0) return;
    const write: TableWrite<CopyRows[T]> = WRITES[table];
    const arrays: Cell[][] = [];
    for (const row of rows) write.columns(row).forEach((cell, i) => (arrays[i] ??= []).push(cell));
    await this.client.query(write.sql, arrays);
  }

  /**
   * DELETE, not TRUNCATE: TRUNCATE waits for every transaction that has read the
   * table, including a source snapshot on the same database, and empties the table
   * for snapshots taken before it too.
   */
  async clear(): Promise<void> {
    for (const table of CLEAR_ORDER) await this.client.query(`DELETE FROM ${table}`);
  }

  /**
   * setval is not transactional: a copy that rolls back leaves the counter raised,
   * which costs nothing (versions need only be new, not consecutive).
   */
  async raiseVersionCounter(last: bigint): Promise<void> {
    await this.client.query(
      "SELECT setval('plant_versions', greatest($1::int8, 1, pg_sequence_last_value('plant_versions')))",
      [last.toString()],
    );
  }

  /**
   * The change log's history anew (migration 0012): the store now holds another store's
   * plants, and a stream client's position from before must not resume in it.
   */
  async renewChangeLogHistory(): Promise<void> {
    await this.client.query('UPDATE plant_change_history SET history = md5(random()::text || clock_timestamp()::text)');
  }

  /**
   * Fresh planner statistics for the copied plants: autovacuum would take its time, and until then the
   * planner's row estimate (what `Prefer: count=estimated` answers) guesses from the table's pages. After
   * the commit, so that ANALYZE reads committed rows and holds no lock of the copy's.
   */
  async analyzePlants(): Promise<void> {
    await this.client.query('ANALYZE plants');
  }

  /** Each identity's sequence past the highest value copied (and never back: greatest keeps a higher one). */
  async moveIdentitiesPastCopiedRows(): Promise<void> {
    for (const [table, column] of IDENTITIES) {
      await this.client.query(
        `SELECT setval(s.sequence, greatest((SELECT max(${column}) FROM ${table}), pg_sequence_last_value(s.sequence)))
         FROM (SELECT pg_get_serial_sequence($1, $2)::regclass AS sequence) s`,
        [table, column],
      );
    }
  }
}
