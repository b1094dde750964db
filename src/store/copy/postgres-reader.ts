/**
 * Reading a PostgreSQL store's rows for a copy, in keyset chunks by primary key. int8 is parsed to bigint
 * (clientConfig), so ids, versions and seqs are exact; timestamptz comes as a Date (milliseconds).
 */
import type pg from 'pg';
import type { PlantValues } from '../../domain/plant.js';
import { plantColumnsSql } from '../../domain/plant-sql.js';
import type { CopyReader } from './endpoint.js';
import type { CopyRows, CopyTable, RowKey } from './rows.js';

const ms = (date: Date): number => date.getTime();
const msOrNull = (date: Date | null): number | null => (date === null ? null : date.getTime());

interface TableRead<Row> {
  readonly select: string;
  readonly key: string;
  readonly toRow: (raw: pg.QueryResultRow) => Row;
}

/* The raw rows are exactly what each select names, in the types the connection parses them to. */
const READS: { readonly [T in CopyTable]: TableRead<CopyRows[T]> } = {
  store_secrets: { select: 'name, secret', key: 'name', toRow: (raw) => raw as { name: string; secret: string } },
  tokens: {
    select: 'id, name, secret_hash, scopes, created_at, expires_at, last_used_at, revoked_at',
    key: 'id',
    toRow: (raw) => {
      const r = raw as {
        id: string;
        name: string;
        secret_hash: string;
        scopes: string[];
        created_at: Date;
        expires_at: Date | null;
        last_used_at: Date | null;
        revoked_at: Date | null;
      };
      return {
        id: r.id,
        name: r.name,
        secretHash: r.secret_hash,
        scopes: r.scopes,
        createdAt: ms(r.created_at),
        expiresAt: msOrNull(r.expires_at),
        lastUsedAt: msOrNull(r.last_used_at),
        revokedAt: msOrNull(r.revoked_at),
      };
    },
  },
  plants: {
    select: `${plantColumnsSql()}, version, created_at`,
    key: 'id',
    toRow: (raw) => {
      const { created_at: createdAt, ...plant } = raw as PlantValues & { version: bigint; created_at: Date };
      return { ...plant, createdAt: ms(createdAt) };
    },
  },
  webhook_subscriptions: {
    select:
      'seq, id, url, description, secret, previous_secret, previous_secret_expires_at, event_types, created_at, ' +
      'version, enabled, disabled_at, disabled_reason, failing_since, max_per_second, throttle_last_at, throttle_count',
    key: 'id',
    toRow: (raw) => {
      const r = raw as {
        seq: bigint;
        id: string;
        url: string;
        description: string | null;
        secret: string;
        previous_secret: string | null;
        previous_secret_expires_at: Date | null;
        event_types: string[];
        created_at: Date;
        version: number;
        enabled: boolean;
        disabled_at: Date | null;
        disabled_reason: string | null;
        failing_since: Date | null;
        max_per_second: number | null;
        throttle_last_at: Date | null;
        throttle_count: number;
      };
      return {
        seq: r.seq,
        id: r.id,
        url: r.url,
        description: r.description,
        secret: r.secret,
        previousSecret: r.previous_secret,
        previousSecretExpiresAt: msOrNull(r.previous_secret_expires_at),
        eventTypes: r.event_types,
        createdAt: ms(r.created_at),
        version: r.version,
        enabled: r.enabled,
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
    key: 'id',
    toRow: (raw) => {
      const r = raw as { id: string; type: string; payload: string; created_at: Date };
      return { id: r.id, type: r.type, payload: r.payload, createdAt: ms(r.created_at) };
    },
  },
  webhook_deliveries: {
    select:
      'seq, id, event_id, subscription_id, status, attempt_count, manual, next_attempt_at, lease_owner, lease_until, created_at',
    key: 'id',
    toRow: (raw) => {
      const r = raw as {
        seq: bigint;
        id: string;
        event_id: string;
        subscription_id: string;
        status: string;
        attempt_count: number;
        manual: boolean;
        next_attempt_at: Date | null;
        lease_owner: string | null;
        lease_until: Date | null;
        created_at: Date;
      };
      return {
        seq: r.seq,
        id: r.id,
        eventId: r.event_id,
        subscriptionId: r.subscription_id,
        status: r.status,
        attemptCount: r.attempt_count,
        manual: r.manual,
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
    key: 'id',
    toRow: (raw) => {
      const r = raw as {
        id: bigint;
        delivery_id: string;
        attempt: number;
        attempted_at: Date;
        response_status: number | null;
        latency_ms: number;
        error: string | null;
        response_body: string | null;
        response_content_type: string | null;
      };
      return {
        id: r.id,
        deliveryId: r.delivery_id,
        attempt: r.attempt,
        attemptedAt: ms(r.attempted_at),
        responseStatus: r.response_status,
        latencyMs: r.latency_ms,
        error: r.error,
        responseBody: r.response_body,
        responseContentType: r.response_content_type,
      };
    },
  },
  webhook_recoveries: {
    select:
      'id, subscription_id, window_key, since, until, status, requeued, cursor_at, cursor_id, created_at, updated_at, finished_at',
    key: 'id',
    toRow: (raw) => {
      const r = raw as {
        id: string;
        subscription_id: string;
        window_key: string;
        since: Date;
        until: Date;
        status: string;
        requeued: number;
        cursor_at: Date | null;
        cursor_id: string | null;
        created_at: Date;
        updated_at: Date;
        finished_at: Date | null;
      };
      return {
        id: r.id,
        subscriptionId: r.subscription_id,
        windowKey: r.window_key,
        since: ms(r.since),
        until: ms(r.until),
        status: r.status,
        requeued: r.requeued,
        cursorAt: msOrNull(r.cursor_at),
        cursorId: r.cursor_id,
        createdAt: ms(r.created_at),
        updatedAt: ms(r.updated_at),
        finishedAt: msOrNull(r.finished_at),
      };
    },
  },
};

/** A key as a parameter: int8 keys as decimal text (exact), text keys as they are. */
const parameter = (key: RowKey): string => key.toString();

export class PostgresCopyReader implements CopyReader {
  readonly kind = 'postgres';

  constructor(
    protected readonly client: pg.Client,
    readonly label: string,
  ) {}

  async read<T extends CopyTable>(table: T, after: RowKey | undefined, limit: number): Promise<CopyRows[T][]> {
    const read: TableRead<CopyRows[T]> = READS[table];
    // The key is compared in its own column's type (int8 or text), so the primary key's index serves the range.
    const where = after === undefined ? '' : `WHERE ${read.key} > $2::${typeof after === 'bigint' ? 'int8' : 'text'}`;
    const { rows } = await this.client.query(
      `SELECT ${read.select} FROM ${table} ${where} ORDER BY ${read.key} LIMIT $1`,
      after === undefined ? [limit] : [limit, parameter(after)],
    );
    return rows.map(read.toRow);
  }

  async count(table: CopyTable): Promise<number> {
    return this.number(`SELECT count(*) AS value FROM ${table}`);
  }

  async pendingDeliveries(): Promise<number> {
    return this.number("SELECT count(*) AS value FROM webhook_deliveries WHERE status = 'pending'");
  }

  /** A sequence not yet used (is_called false) hands out last_value next. Not transactional: the value now, not the
   * snapshot's. */
  async versionCounter(): Promise<bigint> {
    const { rows } = await this.client.query<{ value: bigint }>(
      'SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END AS value FROM plant_versions',
    );
    return rows[0]?.value ?? 0n;
  }

  private async number(sql: string): Promise<number> {
    const { rows } = await this.client.query<{ value: bigint | number }>(sql);
    return Number(rows[0]?.value ?? 0);
  }
}
