/**
 * A store's data as `plantstore copy` carries it, the same rows whichever database: each reader converts its
 * types to these and each writer back. Ids, versions and positions are bigint; times are epoch milliseconds
 * (a PostgreSQL plant's microseconds round, as SQLite would).
 *
 * Not carried: the find columns (each writer derives them, search-text.ts), SQLite's json column and search
 * index (maintained from the row), schema_migrations (each store has its own), and SQLite events' rowid
 * order (only retention's tie-break within a millisecond reads it).
 */

import type { PlantValues } from '../../domain/plant.js';

export type PlantRow = PlantValues & {
  /** Its ETag: copied as it is, so clients' If-Match headers stay valid. */
  readonly version: bigint;
  readonly createdAt: number;
};

export interface TokenRow {
  readonly id: string;
  readonly name: string;
  readonly secretHash: string;
  readonly scopes: readonly string[];
  readonly createdAt: number;
  readonly expiresAt: number | null;
  readonly lastUsedAt: number | null;
  readonly revokedAt: number | null;
  /** The id of the token that created it; null for the first-start token and the CLI's. */
  readonly createdBy: string | null;
}

/** The store's own random secrets by name ('page-cursor' signs the list's page cursors). */
export interface SecretRow {
  readonly name: string;
  readonly secret: string;
}

export interface SubscriptionRow {
  /** SQLite's rowid, PostgreSQL's seq: lists order by creation time, then this, within one millisecond. */
  readonly seq: bigint;
  readonly id: string;
  readonly url: string;
  readonly description: string | null;
  readonly secret: string;
  readonly previousSecret: string | null;
  readonly previousSecretExpiresAt: number | null;
  readonly eventTypes: readonly string[];
  readonly createdAt: number;
  /** Its ETag: copied as it is, so clients' If-Match headers stay valid. */
  readonly version: number;
  readonly enabled: boolean;
  readonly disabledAt: number | null;
  readonly disabledReason: string | null;
  /** When its attempts started failing: the automatic disable keeps counting from it in the copy. */
  readonly failingSince: number | null;
  /** Its tag filter. */
  readonly tag: string | null;
  /** Its throttle, and the deliveries counted against it in the current run (so a copy keeps to the rate). */
  readonly maxPerSecond: number | null;
  readonly throttleLastAt: number | null;
  readonly throttleCount: number;
}

export interface EventRow {
  readonly id: string;
  readonly type: string;
  readonly payload: string;
  readonly createdAt: number;
  /** The plant's tags after and before the change, which chose the event's deliveries. */
  readonly tag: string | null;
  readonly previousTag: string | null;
}

export interface DeliveryRow {
  /** As SubscriptionRow.seq: the deliveries of one batch share a time, and keep their order. */
  readonly seq: bigint;
  readonly id: string;
  readonly eventId: string;
  readonly subscriptionId: string;
  readonly status: string;
  readonly attemptCount: number;
  readonly manual: boolean;
  readonly nextAttemptAt: number | null;
  /** A lease held when the copy was taken: it expires by itself, as in the source. */
  readonly leaseOwner: string | null;
  readonly leaseUntil: number | null;
  readonly createdAt: number;
}

export interface AttemptRow {
  readonly id: bigint;
  readonly deliveryId: string;
  readonly attempt: number;
  readonly attemptedAt: number;
  readonly responseStatus: number | null;
  readonly latencyMs: number;
  readonly error: string | null;
  readonly responseBody: string | null;
  readonly responseContentType: string | null;
}

/** A recovery (re-queuing a window's failed deliveries); a running one is continued by the copy's dispatchers. */
export interface RecoveryRow {
  readonly id: string;
  readonly subscriptionId: string;
  readonly windowKey: string;
  readonly since: number;
  readonly until: number;
  readonly status: string;
  readonly requeued: number;
  readonly cursorAt: number | null;
  readonly cursorId: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly finishedAt: number | null;
}

/** Every table the copy carries, by its name in both schemas. */
export interface CopyRows {
  store_secrets: SecretRow;
  tokens: TokenRow;
  plants: PlantRow;
  webhook_subscriptions: SubscriptionRow;
  webhook_events: EventRow;
  webhook_deliveries: DeliveryRow;
  webhook_delivery_attempts: AttemptRow;
  webhook_recoveries: RecoveryRow;
}

export type CopyTable = keyof CopyRows;

/** In the order they are written: a row's parents (foreign keys) before it. */
export const COPY_TABLES = [
  'store_secrets',
  'tokens',
  'plants',
  'webhook_subscriptions',
  'webhook_events',
  'webhook_deliveries',
  'webhook_delivery_attempts',
  'webhook_recoveries',
] as const satisfies readonly CopyTable[];

/** Each table as people call it, for messages and the verification table. */
export const TABLE_LABELS: Readonly<Record<CopyTable, string>> = {
  store_secrets: 'store secrets',
  tokens: 'tokens',
  plants: 'plants',
  webhook_subscriptions: 'webhook subscriptions',
  webhook_events: 'webhook events',
  webhook_deliveries: 'webhook deliveries',
  webhook_delivery_attempts: 'delivery attempts',
  webhook_recoveries: 'webhook recoveries',
};

/** A row's primary key, which readers page by (keyset: `WHERE key > last ORDER BY key`). */
export type RowKey = bigint | string;

export function keyOf(row: CopyRows[CopyTable]): RowKey {
  return 'id' in row ? row.id : row.name;
}

/** SQLite's and the copy's form of a list: comma-separated ('' for none); no item holds a comma. */
export function splitList(text: string): string[] {
  return text === '' ? [] : text.split(',');
}
