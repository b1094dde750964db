/**
 * Webhook rows as both stores read them, and their mapping to the store's records.
 * The stores differ only in how a time comes back (a Date from PostgreSQL's
 * timestamptz, integer milliseconds from SQLite), so rows are generic over it.
 */
import type {
  SigningKeys,
  WebhookRecovery,
  ClaimedDelivery,
  DeliveryAttempt,
  DeliveryStatus,
  WebhookDelivery,
  WebhookSubscription,
} from './types.js';
import { isEventType, plantOfEvent } from '../domain/events.js';

export interface SubscriptionRow<Time> {
  id: string;
  url: string;
  description: string | null;
  tag: string | null;
  /** A text[] on PostgreSQL, comma-separated text on SQLite. */
  event_types: string | string[];
  created_at: Time;
  version: number;
  /** A boolean from PostgreSQL, 0 or 1 from SQLite. */
  enabled: boolean | number;
  disabled_at: Time | null;
  disabled_reason: string | null;
  max_per_second: number | null;
}

/** The columns a SubscriptionRow is read from. */
export const SUBSCRIPTION_COLUMNS =
  'id, url, description, tag, event_types, created_at, version, enabled, disabled_at, disabled_reason, max_per_second';

export interface DeliveryRow<Time> {
  id: string;
  subscription_id: string;
  event_id: string;
  type: string;
  /** The event's payload: the delivery log names the plant it is about. */
  payload: string;
  status: DeliveryStatus;
  attempt_count: number;
  next_attempt_at: Time | null;
  created_at: Time;
}

export interface AttemptRow<Time> {
  delivery_id: string;
  attempt: number;
  attempted_at: Time;
  response_status: number | null;
  latency_ms: number;
  error: string | null;
  response_body: string | null;
  response_content_type: string | null;
}

export interface RecoveryRow<Time> {
  id: string;
  subscription_id: string;
  since: Time;
  until: Time;
  status: 'running' | 'done';
  requeued: number;
  cursor_at: Time | null;
  cursor_id: string | null;
  created_at: Time;
  updated_at: Time;
  finished_at: Time | null;
}

export const RECOVERY_COLUMNS =
  'id, subscription_id, since, until, status, requeued, cursor_at, cursor_id, created_at, updated_at, finished_at';

/** A delivery as a claim returns it, joined with its event and subscription. */
export interface ClaimRow {
  id: string;
  subscription_id: string;
  event_id: string;
  type: string;
  payload: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  attempt_count: number;
  /** A boolean from PostgreSQL, 0 or 1 from SQLite (which has no boolean type). */
  manual: boolean | number;
}

export function toClaimedDelivery(row: ClaimRow, leaseOwner: string): ClaimedDelivery {
  return {
    deliveryId: row.id,
    subscriptionId: row.subscription_id,
    eventId: row.event_id,
    eventType: row.type,
    payload: row.payload,
    url: row.url,
    secret: row.secret,
    ...(row.previous_secret === null ? {} : { previousSecret: row.previous_secret }),
    attempt: row.attempt_count + 1,
    manual: row.manual === true || row.manual === 1,
    leaseOwner,
  };
}

export function signingKeysOf(row: { url: string; secret: string; previous_secret: string | null }): SigningKeys {
  return {
    url: row.url,
    secret: row.secret,
    ...(row.previous_secret === null ? {} : { previousSecret: row.previous_secret }),
  };
}

export const DELIVERY_COLUMNS =
  'd.id, d.subscription_id, d.event_id, e.type, e.payload, d.status, d.attempt_count, d.next_attempt_at, d.created_at';
export const DELIVERY_FROM = 'webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id';

/** The row-to-record mappers for a store whose times come back as `Time`. */
export function webhookRowMappers<Time>(toDate: (time: Time) => Date) {
  const mappers = {
    toSubscription(row: SubscriptionRow<Time>): WebhookSubscription {
      const types = typeof row.event_types === 'string' ? row.event_types.split(',') : row.event_types;
      const base = {
        id: row.id,
        url: row.url,
        eventTypes: types.filter(isEventType),
        createdAt: toDate(row.created_at),
        version: row.version,
        enabled: row.enabled === true || row.enabled === 1,
        ...(row.description === null ? {} : { description: row.description }),
        ...(row.tag === null ? {} : { tag: row.tag }),
        ...(row.disabled_at === null ? {} : { disabledAt: toDate(row.disabled_at) }),
        ...(row.disabled_reason === null ? {} : { disabledReason: row.disabled_reason }),
        ...(row.max_per_second === null ? {} : { maxPerSecond: row.max_per_second }),
      };
      return base;
    },
    toRecovery(row: RecoveryRow<Time>): WebhookRecovery {
      return {
        id: row.id,
        subscriptionId: row.subscription_id,
        since: toDate(row.since),
        until: toDate(row.until),
        status: row.status,
        requeued: row.requeued,
        createdAt: toDate(row.created_at),
        updatedAt: toDate(row.updated_at),
        ...(row.finished_at === null ? {} : { finishedAt: toDate(row.finished_at) }),
      };
    },
    toAttempt(row: AttemptRow<Time>): DeliveryAttempt {
      return {
        attempt: row.attempt,
        attemptedAt: toDate(row.attempted_at),
        latencyMs: row.latency_ms,
        ...(row.response_status === null ? {} : { responseStatus: row.response_status }),
        ...(row.error === null ? {} : { error: row.error }),
        ...(row.response_body === null ? {} : { responseBody: row.response_body }),
        ...(row.response_content_type === null ? {} : { responseContentType: row.response_content_type }),
      };
    },
    toDelivery(row: DeliveryRow<Time>, attempts: DeliveryAttempt[]): WebhookDelivery {
      const plant = plantOfEvent(row.type, row.payload);
      return {
        id: row.id,
        subscriptionId: row.subscription_id,
        eventId: row.event_id,
        eventType: row.type,
        status: row.status,
        attemptCount: row.attempt_count,
        ...(row.next_attempt_at === null ? {} : { nextAttemptAt: toDate(row.next_attempt_at) }),
        createdAt: toDate(row.created_at),
        attempts,
        ...(plant === undefined ? {} : { plant }),
      };
    },
    /** The deliveries, each with its attempts (`attempts` are those of all of them, in order). */
    attachAttempts(rows: readonly DeliveryRow<Time>[], attempts: readonly AttemptRow<Time>[]): WebhookDelivery[] {
      const byDelivery = new Map<string, DeliveryAttempt[]>();
      for (const attempt of attempts) {
        const list = byDelivery.get(attempt.delivery_id) ?? [];
        list.push(mappers.toAttempt(attempt));
        byDelivery.set(attempt.delivery_id, list);
      }
      return rows.map((row) => mappers.toDelivery(row, byDelivery.get(row.id) ?? []));
    },
  };
  return mappers;
}
