/**
 * Reading a SQLite store's rows for a copy, in keyset chunks by primary key, so every chunk costs the same
 * and memory holds one. Integers are read as bigint (safeIntegers), so ids and versions are exact.
 */
import type Database from 'better-sqlite3';
import type { PlantValues } from '../../domain/plant.js';
import { plantColumnsSql } from '../../domain/plant-sql.js';
import type { CopyReader } from './endpoint.js';
import { splitList, type CopyRows, type CopyTable, type RowKey } from './rows.js';

type Int = bigint;
const ms = (value: Int): number => Number(value);
const msOrNull = (value: Int | null): number | null => (value === null ? null : Number(value));

interface TableRead<Row> {
  /** The columns, the table and the key the chunks are ordered by. */
  readonly select: string;
  readonly from: string;
  readonly key: string;
  readonly toRow: (raw: Record<string, unknown>) => Row;
}

/* The raw rows are exactly what each select names, as SQLite's columns hold them. */
const READS: { readonly [T in CopyTable]: TableRead<CopyRows[T]> } = {
  store_secrets: {
    select: 'name, secret',
    from: 'store_secrets',
    key: 'name',
    toRow: (raw) => raw as { name: string; secret: string },
  },
  tokens: {
    select: 'id, name, secret_hash, scopes, created_at, expires_at, last_used_at, revoked_at',
    from: 'tokens',
    key: 'id',
    toRow: (raw) => {
      const r = raw as {
        id: string;
        name: string;
        secret_hash: string;
        scopes: string;
        created_at: Int;
        expires_at: Int | null;
        last_used_at: Int | null;
        revoked_at: Int | null;
      };
      return {
        id: r.id,
        name: r.name,
        secretHash: r.secret_hash,
        scopes: splitList(r.scopes),
        createdAt: ms(r.created_at),
        expiresAt: msOrNull(r.expires_at),
        lastUsedAt: msOrNull(r.last_used_at),
        revokedAt: msOrNull(r.revoked_at),
      };
    },
  },
  plants: {
    select: `${plantColumnsSql()}, version, created_at`,
    from: 'plants',
    key: 'id',
    toRow: (raw) => {
      const { created_at: createdAt, ...plant } = raw as PlantValues & { version: Int; created_at: Int };
      return { ...plant, createdAt: ms(createdAt) };
    },
  },
  webhook_subscriptions: {
    select:
      'rowid AS seq, id, url, description, secret, previous_secret, previous_secret_expires_at, event_types, created_at, ' +
      'version, enabled, disabled_at, disabled_reason, failing_since, max_per_second, throttle_last_at, throttle_count',
    from: 'webhook_subscriptions',
    key: 'id',
    toRow: (raw) => {
      const r = raw as {
        seq: Int;
        id: string;
        url: string;
        description: string | null;
        secret: string;
        previous_secret: string | null;
        previous_secret_expires_at: Int | null;
        event_types: string;
        created_at: Int;
        version: Int;
        enabled: Int;
        disabled_at: Int | null;
        disabled_reason: string | null;
        failing_since: Int | null;
        max_per_second: Int | null;
        throttle_last_at: Int | null;
        throttle_count: Int;
      };
      return {
        seq: r.seq,
        id: r.id,
        url: r.url,
        description: r.description,
        secret: r.secret,
        previousSecret: r.previous_secret,
        previousSecretExpiresAt: msOrNull(r.previous_secret_expires_at),
        eventTypes: splitList(r.event_types),
        createdAt: ms(r.created_at),
        version: Number(r.version),
        enabled: r.enabled !== 0n,
        disabledAt: msOrNull(r.disabled_at),
        disabledReason: r.disabled_reason,
        failingSince: msOrNull(r.failing_since),
        maxPerSecond: r.max_per_second === null ? null : Number(r.max_per_second),
        throttleLastAt: msOrNull(r.throttle_last_at),
        throttleCount: Number(r.throttle_count),
      };
    },
  },
  webhook_events: {
    select: 'id, type, payload, created_at',
    from: 'webhook_events',
    key: 'id',
    toRow: (raw) => {
      const r = raw as { id: string; type: string; payload: string; created_at: Int };
      return { id: r.id, type: r.type, payload: r.payload, createdAt: ms(r.created_at) };
    },
  },
  webhook_deliveries: {
    select:
      'rowid AS seq, id, event_id, subscription_id, status, attempt_count, manual, next_attempt_at, lease_owner, lease_until, created_at',
    from: 'webhook_deliveries',
    key: 'id',
    toRow: (raw) => {
      const r = raw as {
        seq: Int;
        id: string;
        event_id: string;
        subscription_id: string;
        status: string;
        attempt_count: Int;
        manual: Int;
        next_attempt_at: Int | null;
        lease_owner: string | null;
        lease_until: Int | null;
        created_at: Int;
      };
      return {
        seq: r.seq,
        id: r.id,
        eventId: r.event_id,
        subscriptionId: r.subscription_id,
        status: r.status,
        attemptCount: Number(r.attempt_count),
        manual: r.manual !== 0n,
        nextAttemptAt: msOrNull(r.next_attempt_at),
        leaseOwner: r.lease_owner,
        leaseUntil: msOrNull(r.lease_until),
        createdAt: ms(r.created_at),
      };
    },
  },
  webhook_delivery_attempts: {
    select:
      'id, delivery_id, attempt, attempted_at, response_status, latency_ms, error, response_body, response_content_type',
    from: 'webhook_delivery_attempts',
    key: 'id',
    toRow: (raw) => {
      const r = raw as {
        id: Int;
        delivery_id: string;
        attempt: Int;
        attempted_at: Int;
        response_status: Int | null;
        latency_ms: Int;
        error: string | null;
        response_body: string | null;
        response_content_type: string | null;
      };
      return {
        id: r.id,
        deliveryId: r.delivery_id,
        attempt: Number(r.attempt),
        attemptedAt: ms(r.attempted_at),
        responseStatus: msOrNull(r.response_status),
        latencyMs: Number(r.latency_ms),
        error: r.error,
        responseBody: r.response_body,
        responseContentType: r.response_content_type,
      };
    },
  },
  webhook_recoveries: {
    select:
      'id, subscription_id, window_key, since, until, status, requeued, cursor_at, cursor_id, created_at, updated_at, finished_at',
    from: 'webhook_recoveries',
    key: 'id',
    toRow: (raw) => {
      const r = raw as {
        id: string;
        subscription_id: string;
        window_key: string;
        since: Int;
        until: Int;
        status: string;
        requeued: Int;
        cursor_at: Int | null;
        cursor_id: string | null;
        created_at: Int;
        updated_at: Int;
        finished_at: Int | null;
      };
      return {
        id: r.id,
        subscriptionId: r.subscription_id,
        windowKey: r.window_key,
        since: ms(r.since),
        until: ms(r.until),
        status: r.status,
        requeued: Number(r.requeued),
        cursorAt: msOrNull(r.cursor_at),
        cursorId: r.cursor_id,
        createdAt: ms(r.created_at),
        updatedAt: ms(r.updated_at),
        finishedAt: msOrNull(r.finished_at),
      };
    },
  },
};

export class SqliteCopyReader implements CopyReader {
  readonly kind = 'sqlite';
  /** Two statements per table (first chunk, chunks after a key), prepared on first use. */
  private readonly statements = new Map<string, Database.Statement>();

  constructor(
    protected readonly db: Database.Database,
    readonly label: string,
  ) {}

  async read<T extends CopyTable>(table: T, after: RowKey | undefined, limit: number): Promise<CopyRows[T][]> {
    const read: TableRead<CopyRows[T]> = READS[table];
    const where = after === undefined ? '' : `WHERE ${read.key} > ?`;
    const statement = this.statement(`SELECT ${read.select} FROM ${read.from} ${where} ORDER BY ${read.key} LIMIT ?`);
    const raws = (after === undefined ? statement.all(limit) : statement.all(after, limit)) as Record<
      string,
      unknown
    >[];
    return raws.map(read.toRow);
  }

  async count(table: CopyTable): Promise<number> {
    return Number(this.statement(`SELECT count(*) FROM ${table}`).pluck().get());
  }

  async pendingDeliveries(): Promise<number> {
    return Number(this.statement("SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'").pluck().get());
  }

  async versionCounter(): Promise<bigint> {
    return this.statement('SELECT last FROM plant_version_counter').pluck().get() as bigint;
  }

  protected statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql).safeIntegers(true);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}
