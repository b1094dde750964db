/**
 * Webhook subscriptions and the delivery outbox on PostgreSQL, shared by instances. A claim is one statement:
 * FOR UPDATE SKIP LOCKED so simultaneous claims never pick the same row, and a lease keeps others off it after.
 */
import type pg from 'pg';
import type {
  AttemptResult,
  ClaimedDelivery,
  ClaimRequest,
  ExpectedSubscriptionVersion,
  ListDeliveriesQuery,
  SigningKeys,
  NewWebhookRecovery,
  NewWebhookSubscription,
  WebhookRecovery,
  SubscriptionChange,
  UpdateSubscriptionOutcome,
  PlantRecord,
  WebhookDelivery,
  WebhookStore,
  WebhookSubscription,
} from '../types.js';
import type { WebhookBacklog } from '../webhook-types.js';
import { PLANT_CREATED, plantCreatedEvent, webhookDisabledEvent, type EventType } from '../../domain/events.js';
import { deliveryUpdate } from '../core/delivery-update.js';
import { applySubscriptionChange, versionAccepted } from '../core/subscription-change.js';
import { plantJsonSql } from '../../domain/plant-json.js';
import { guarded } from './errors.js';
import { inTransaction } from './transaction.js';
import { ArrayInput } from './array-input.js';
import { PLANT_INPUT_TYPES, recordInput, type PlantInput } from './plant-input.js';
import {
  DELIVERY_COLUMNS,
  DELIVERY_FROM,
  RECOVERY_COLUMNS,
  SUBSCRIPTION_COLUMNS,
  signingKeysOf,
  toClaimedDelivery,
  webhookRowMappers,
  type ClaimRow,
  type AttemptRow as AttemptRows,
  type DeliveryRow as DeliveryRows,
  type RecoveryRow as RecoveryRows,
  type SubscriptionRow as SubscriptionRows,
} from '../webhook-rows.js';

type SubscriptionRow = SubscriptionRows<Date>;
type DeliveryRow = DeliveryRows<Date>;
type AttemptRow = AttemptRows<Date>;
type RecoveryRow = RecoveryRows<Date>;
const { toSubscription, toRecovery, attachAttempts } = webhookRowMappers<Date>((date) => date);

/**
 * The CTE that writes the deliveries of the rows of a CTE named `event` (the events
 * of type `type` just written, returning id, tag, previous_tag) to every subscription
 * that chose that type and whose tag filter, if any, is the plant's tag after the change
 * or before it, pending from `now` (a parameter reference, e.g. '$7').
 */
export function deliveriesOfEvent(type: EventType, now: string): string {
  return `deliveries AS (
      INSERT INTO webhook_deliveries (id, event_id, subscription_id, status, attempt_count, manual, next_attempt_at, created_at)
      -- md5 only derives an id: unique because event ids are (and core in every PostgreSQL, unlike gen_random_uuid before 13).
      SELECT 'dlv_' || md5(event.id || ':' || s.id), event.id, s.id, 'pending', 0, false, ${now}::timestamptz, ${now}::timestamptz
      FROM event CROSS JOIN webhook_subscriptions s
      WHERE '${type}' = ANY(s.event_types) AND ${TAG_FILTER_PASSES}
    )`;
}

/** A subscription `s`'s tag filter lets the plant event `event` through. */
const TAG_FILTER_PASSES = '(s.tag IS NULL OR s.tag = event.tag OR s.tag = event.previous_tag)';

/**
 * A plant's JSON, as the events carry it (plantJson's text): built by the database
 * where the statement decides the plant's content.
 */
export const PLANT_JSON_SQL = plantJsonSql('postgres');

/** A batch of plants to insert, as create's statements take it (ids unique within the batch). */
const PLANTS_INPUT = new ArrayInput<PlantInput>(PLANT_INPUT_TYPES);

/** The same with each plant's plant.created event. */
type PlantEventInput = PlantInput & {
  readonly event_id: string;
  readonly event_type: string;
  readonly payload: string;
};
const PLANT_EVENTS_INPUT = new ArrayInput<PlantEventInput>({
  ...PLANT_INPUT_TYPES,
  event_id: 'text',
  event_type: 'text',
  payload: 'text',
});

/**
 * The create path's insert of a batch of plants with its outbox in the same statement: an event and its
 * deliveries for exactly the plants inserted, none without a subscription. Ids come as decimal text (exact)
 * and go in id order, so concurrent batches cannot deadlock. No id twice. Its values: insertPlantsValues.
 */
export const INSERT_PLANTS_WITH_OUTBOX = {
  name: 'plants.insert-batch-with-outbox',
  text: `
    WITH input AS (
      SELECT * FROM ${PLANT_EVENTS_INPUT.unnest('i')}
    ), inserted AS (
      INSERT INTO plants (${PLANTS_INPUT.columns()})
      SELECT ${PLANTS_INPUT.columns()} FROM input ORDER BY id ON CONFLICT (id) DO NOTHING RETURNING id, version
    ), event AS (
      INSERT INTO webhook_events (id, type, payload, created_at, tag)
      SELECT input.event_id, input.event_type, input.payload, ${PLANT_EVENTS_INPUT.parameter()}::timestamptz, input.tag
      FROM inserted JOIN input ON input.id = inserted.id
      WHERE EXISTS (SELECT 1 FROM webhook_subscriptions WHERE '${PLANT_CREATED}' = ANY(event_types))
      RETURNING id, tag, previous_tag
    ), ${deliveriesOfEvent(PLANT_CREATED, PLANT_EVENTS_INPUT.parameter())}
    SELECT id, version FROM inserted`,
};

/**
 * The same insert without events, for the usual case of no subscription: it inserts only if no subscription
 * is visible in its snapshot. Each row carries `subscribed` and, when false, an inserted id (one NULL-id row
 * if every id existed); when true nothing was inserted and the caller runs INSERT_PLANTS_WITH_OUTBOX.
 * Its values: insertPlantsOnlyValues.
 */
export const INSERT_PLANTS_UNLESS_SUBSCRIBED = {
  name: 'plants.insert-batch-unless-subscribed',
  text: `
    WITH subscribed AS (
      SELECT EXISTS (SELECT 1 FROM webhook_subscriptions WHERE '${PLANT_CREATED}' = ANY(event_types)) AS found
    ), inserted AS (
      INSERT INTO plants (${PLANTS_INPUT.columns()})
      SELECT i.* FROM ${PLANTS_INPUT.unnest('i')}
      WHERE NOT (SELECT found FROM subscribed)
      ORDER BY i.id ON CONFLICT (id) DO NOTHING RETURNING id, version
    )
    SELECT subscribed.found AS subscribed, inserted.id, inserted.version FROM subscribed LEFT JOIN inserted ON true`,
};

/** The values of INSERT_PLANTS_UNLESS_SUBSCRIBED. */
export function insertPlantsOnlyValues(plants: readonly PlantRecord[]): unknown[] {
  return PLANTS_INPUT.values(plants.map(recordInput));
}

/** The values of INSERT_PLANTS_WITH_OUTBOX: the plants with their events, and the time. */
export function insertPlantsValues(plants: readonly PlantRecord[], now = new Date()): unknown[] {
  const rows = plants.map((plant): PlantEventInput => {
    const event = plantCreatedEvent(plant);
    return { ...recordInput(plant), event_id: event.id, event_type: event.type, payload: event.payload };
  });
  return [...PLANT_EVENTS_INPUT.values(rows), now];
}

/**
 * A subscription's deliveries of one plant. Its events name it in their payload (jsonb keeps an int64 exact;
 * compared as decimal text), found by the webhook_events_plant index (migration 18), then their deliveries by event:
 * a statement of its own, so a plan made for the unfiltered log never walks the subscription's whole log for them.
 */
export const DELIVERIES_OF_PLANT = {
  name: 'webhooks.deliveries-of-plant',
  text: `SELECT ${DELIVERY_COLUMNS} FROM ${DELIVERY_FROM}
         WHERE (e.payload::jsonb) ->> 'id' = $5 AND d.subscription_id = $1
           AND ($2::text IS NULL OR d.status = $2) AND ($4::text IS NULL OR d.event_id = $4)
         ORDER BY d.created_at DESC, d.seq DESC LIMIT $3`,
};

/** A pending delivery's subscription is enabled: a disabled one's deliveries wait, kept, until it is enabled. */
const OF_ENABLED =
  'EXISTS (SELECT 1 FROM webhook_subscriptions s WHERE s.id = webhook_deliveries.subscription_id AND s.enabled)';

const Q = {
  insertSubscription: {
    name: 'webhooks.insert',
    text: 'INSERT INTO webhook_subscriptions (id, url, description, event_types, secret, created_at, tag, max_per_second) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
  },
  listSubscriptions: {
    name: 'webhooks.list',
    text: `SELECT ${SUBSCRIPTION_COLUMNS} FROM webhook_subscriptions ORDER BY created_at, seq`,
  },
  getSubscription: {
    name: 'webhooks.get',
    text: `SELECT ${SUBSCRIPTION_COLUMNS} FROM webhook_subscriptions WHERE id = $1`,
  },
  lockSubscription: {
    name: 'webhooks.lock',
    text: `SELECT ${SUBSCRIPTION_COLUMNS} FROM webhook_subscriptions WHERE id = $1 FOR UPDATE`,
  },
  updateSubscription: {
    name: 'webhooks.update',
    text: `UPDATE webhook_subscriptions
           SET url = $2, description = $3, event_types = $4, enabled = $5, disabled_at = $6, disabled_reason = $7, version = $8, tag = $9,
               max_per_second = $10,
               -- Enabled again: its failing time starts afresh (right-hand sides see the row as it was).
               failing_since = CASE WHEN $5 AND NOT enabled THEN NULL ELSE failing_since END
           WHERE id = $1`,
  },
  signingKeys: {
    name: 'webhooks.signing-keys',
    text: `SELECT url, secret, CASE WHEN previous_secret_expires_at > $2 THEN previous_secret END AS previous_secret
           FROM webhook_subscriptions WHERE id = $1`,
  },
  insertRecovery: {
    name: 'webhooks.recovery-insert',
    text: `INSERT INTO webhook_recoveries (id, subscription_id, window_key, since, until, status, created_at, updated_at)
           SELECT $1, $2, $3, $4, $5, 'running', $6, $6 WHERE EXISTS (SELECT 1 FROM webhook_subscriptions WHERE id = $2)
           ON CONFLICT (subscription_id, window_key) DO NOTHING`,
  },
  recoveryOfWindow: {
    name: 'webhooks.recovery-of-window',
    text: `SELECT ${RECOVERY_COLUMNS} FROM webhook_recoveries WHERE subscription_id = $1 AND window_key = $2`,
  },
  getRecovery: {
    name: 'webhooks.recovery',
    text: `SELECT ${RECOVERY_COLUMNS} FROM webhook_recoveries WHERE subscription_id = $1 AND id = $2`,
  },
  // The row lock makes concurrent runners of one recovery take turns: each batch starts from the last's cursor.
  staleRecoveries: {
    name: 'webhooks.stale-recoveries',
    text: "SELECT id FROM webhook_recoveries WHERE status = 'running' AND updated_at < $1 ORDER BY created_at",
  },
  lockRecovery: {
    name: 'webhooks.recovery-lock',
    text: `SELECT ${RECOVERY_COLUMNS} FROM webhook_recoveries WHERE id = $1 FOR UPDATE`,
  },
  // One statement: the window's next deliveries after the cursor (by the (subscription_id, created_at, seq) index),
  // the failed ones made pending, and the count and new cursor.
  recoverBatch: {
    name: 'webhooks.recovery-batch',
    text: `
      WITH batch AS MATERIALIZED (
        SELECT id, created_at, status FROM webhook_deliveries
        WHERE subscription_id = $1 AND created_at >= $2 AND created_at < $3
          AND ($4::timestamptz IS NULL OR (created_at, id) > ($4::timestamptz, $5::text))
        ORDER BY created_at, id LIMIT $6
      ), requeued AS (
        UPDATE webhook_deliveries d SET status = 'pending', manual = true, next_attempt_at = $7
        FROM batch WHERE d.id = batch.id AND batch.status = 'failed' AND d.status = 'failed'
        RETURNING d.id
      ), last AS (
        SELECT created_at, id FROM batch ORDER BY created_at DESC, id DESC LIMIT 1
      )
      SELECT (SELECT count(*)::int FROM requeued) AS requeued, (SELECT count(*)::int FROM batch) AS seen,
             (SELECT created_at FROM last) AS cursor_at, (SELECT id FROM last) AS cursor_id`,
  },
  advanceRecovery: {
    name: 'webhooks.recovery-advance',
    text: `UPDATE webhook_recoveries
           SET requeued = requeued + $2, cursor_at = coalesce($3, cursor_at), cursor_id = coalesce($4, cursor_id),
               updated_at = $5, status = CASE WHEN $6 THEN 'done' ELSE status END,
               finished_at = CASE WHEN $6 THEN $5 ELSE finished_at END
           WHERE id = $1
           RETURNING ${RECOVERY_COLUMNS}`,
  },
  disableFailing: {
    name: 'webhooks.disable-failing',
    // READ COMMITTED re-checks the WHERE after waiting for a concurrent disable: only the first matches.
    text: `UPDATE webhook_subscriptions
           SET enabled = false, disabled_at = $3, disabled_reason = $4, version = version + 1
           WHERE id = $1 AND enabled AND failing_since <= $2
           RETURNING ${SUBSCRIPTION_COLUMNS}`,
  },
  // A webhook.disabled event: to the other subscriptions that chose its type, and into the change log (GET /events)
  // at the next position, with no plant (plant_id 0); the notification tells every instance's streams at commit.
  emitOperational: {
    name: 'webhooks.emit-operational',
    text: `
      WITH event AS (
        INSERT INTO webhook_events (id, type, payload, created_at)
        SELECT $1, $2::text, $3, $4
        WHERE EXISTS (SELECT 1 FROM webhook_subscriptions WHERE $2::text = ANY(event_types) AND id <> $5)
        RETURNING id
      ), deliveries AS (
        INSERT INTO webhook_deliveries (id, event_id, subscription_id, status, attempt_count, manual, next_attempt_at, created_at)
        SELECT 'dlv_' || md5(event.id || ':' || s.id), event.id, s.id, 'pending', 0, false, $4, $4
        FROM event CROSS JOIN webhook_subscriptions s
        WHERE $2::text = ANY(s.event_types) AND s.id <> $5
      ), counter AS (
        UPDATE plant_change_counter SET last = last + 1 RETURNING last
      ), logged AS (
        INSERT INTO plant_changes (position, type, plant_id, payload) SELECT last, $2::text, 0, $3 FROM counter
      )
      SELECT pg_notify('plant_changes', last::text) FROM counter`,
  },
  rotateSecret: {
    name: 'webhooks.rotate-secret',
    // Right-hand sides see the row as it was: the current secret becomes the previous
    // one (replacing any older), unless there is no overlap ($2 null), when none is kept.
    text: `UPDATE webhook_subscriptions
           SET previous_secret = CASE WHEN $2::timestamptz IS NULL THEN NULL ELSE secret END, secret = $1, previous_secret_expires_at = $2
           WHERE id = $3`,
  },
  // Deliveries and their attempts go with it (ON DELETE CASCADE).
  deleteSubscription: { name: 'webhooks.delete', text: 'DELETE FROM webhook_subscriptions WHERE id = $1' },
  listDeliveries: {
    name: 'webhooks.deliveries',
    text: `SELECT ${DELIVERY_COLUMNS} FROM ${DELIVERY_FROM}
           WHERE d.subscription_id = $1 AND ($2::text IS NULL OR d.status = $2) AND ($4::text IS NULL OR d.event_id = $4)
           ORDER BY d.created_at DESC, d.seq DESC LIMIT $3`,
  },
  listDeliveriesOfPlant: DELIVERIES_OF_PLANT,
  getDelivery: {
    name: 'webhooks.delivery',
    text: `SELECT ${DELIVERY_COLUMNS} FROM ${DELIVERY_FROM} WHERE d.subscription_id = $1 AND d.id = $2`,
  },
  attemptsOf: {
    name: 'webhooks.attempts',
    text: `SELECT delivery_id, attempt, attempted_at, response_status, latency_ms, error, response_body, response_content_type
           FROM webhook_delivery_attempts WHERE delivery_id = ANY($1::text[]) ORDER BY id`,
  },
  backlog: {
    name: 'webhooks.backlog',
    text: `SELECT count(*)::int AS pending, min(created_at) AS oldest FROM webhook_deliveries WHERE status = 'pending'`,
  },
  due: {
    name: 'webhooks.due',
    text: `SELECT 1 FROM webhook_deliveries
           WHERE status = 'pending' AND next_attempt_at <= $1 AND (lease_until IS NULL OR lease_until <= $1) AND ${OF_ENABLED}
           LIMIT 1`,
  },
  claim: {
    name: 'webhooks.claim',
    // One statement. A throttled subscription gives at most what its rate leaves (a new run of max_per_second once
    // a second has passed since its last start, else the rest of the current run): its row is locked (SKIP
    // LOCKED: another instance taking its share now means none here) and its count written in the same
    // statement, so instances together keep to the rate. While more than one subscription has deliveries due,
    // each gives at most $5 less what this dispatcher has in flight for it ($6, {id: count}). Deliveries are
    // taken round-robin: every subscription's oldest due before anyone's second. Runs are metered by the
    // database's clock, read as the statement runs: instances' clocks may disagree, and $1 was read before the
    // statement (a pool's wait ago), so by theirs two instances' runs could land within the same second.
    text: `
      WITH clock AS MATERIALIZED (
        SELECT clock_timestamp() AS at
      ), throttled AS MATERIALIZED (
        SELECT id, max_per_second,
               (throttle_last_at IS NULL OR throttle_last_at <= (SELECT at FROM clock) - interval '1 second') AS fresh,
               throttle_count
        FROM webhook_subscriptions s
        WHERE enabled AND max_per_second IS NOT NULL
          -- A scalar subquery, probed per subscription by (subscription_id, next_attempt_at): an EXISTS would be
          -- planned as a join hashing every due delivery, which a large backlog makes slow.
          AND coalesce((SELECT true FROM webhook_deliveries d
                        WHERE d.subscription_id = s.id AND d.status = 'pending' AND d.next_attempt_at <= $1
                          AND (d.lease_until IS NULL OR d.lease_until <= $1)
                        LIMIT 1), false)
        FOR UPDATE SKIP LOCKED
      ), subs AS MATERIALIZED (
        SELECT id, $2::int AS allowance, false AS metered, 0 AS base
        FROM webhook_subscriptions WHERE enabled AND max_per_second IS NULL
        UNION ALL
        SELECT id, LEAST($2::int, CASE WHEN fresh THEN max_per_second ELSE max_per_second - throttle_count END),
               true, CASE WHEN fresh THEN 0 ELSE throttle_count END
        FROM throttled
      ), found AS MATERIALIZED (
        SELECT d.id, d.subscription_id, d.next_attempt_at,
               row_number() OVER (PARTITION BY d.subscription_id ORDER BY d.next_attempt_at) AS turn
        FROM subs CROSS JOIN LATERAL (
          SELECT id, subscription_id, next_attempt_at FROM webhook_deliveries
          WHERE subscription_id = subs.id AND status = 'pending' AND next_attempt_at <= $1
            AND (lease_until IS NULL OR lease_until <= $1)
          ORDER BY next_attempt_at
          LIMIT greatest(subs.allowance, 0)
          FOR UPDATE SKIP LOCKED
        ) d
        WHERE subs.allowance > 0
      ), candidates AS MATERIALIZED (
        SELECT found.* FROM found
        WHERE (SELECT count(DISTINCT subscription_id) FROM found) = 1
           OR turn <= $5::int - coalesce(($6::jsonb ->> subscription_id)::int, 0)
      ), due AS MATERIALIZED (
        SELECT id, subscription_id FROM candidates ORDER BY turn, next_attempt_at LIMIT $2
      ), leased AS (
        UPDATE webhook_deliveries d SET lease_owner = $3, lease_until = $4
        FROM due WHERE d.id = due.id
        RETURNING d.id, d.subscription_id, d.event_id, d.attempt_count, d.manual
      ), metered AS (
        UPDATE webhook_subscriptions s
        SET throttle_count = subs.base + taken.n, throttle_last_at = (SELECT at FROM clock)
        FROM (SELECT subscription_id, count(*)::int AS n FROM due GROUP BY subscription_id) taken
        JOIN subs ON subs.id = taken.subscription_id AND subs.metered
        WHERE s.id = taken.subscription_id
      )
      SELECT l.id, l.subscription_id, l.event_id, e.type, e.payload, s.url, s.secret,
             CASE WHEN s.previous_secret_expires_at > $1 THEN s.previous_secret END AS previous_secret, l.attempt_count, l.manual
      FROM leased l
      JOIN webhook_events e ON e.id = l.event_id
      JOIN webhook_subscriptions s ON s.id = l.subscription_id`,
  },
  recordAttempt: {
    name: 'webhooks.record-attempt',
    text: `
      WITH logged AS (
        INSERT INTO webhook_delivery_attempts
          (delivery_id, attempt, attempted_at, response_status, latency_ms, error, response_body, response_content_type)
        SELECT $1::text, $2::integer, $3::timestamptz, $4::integer, $5::integer, $6::text, $13::text, $14::text
        -- $15: the record could not be stored before; only the outcome is applied now.
        WHERE EXISTS (SELECT 1 FROM webhook_deliveries WHERE id = $1) AND NOT $15::boolean
      ), health AS (
        -- $12: true after a success, false after a failure, null (a shutdown's release) leaves it. Written only
        -- when the health changes, so a steady subscription's row is not locked by every attempt.
        UPDATE webhook_subscriptions SET failing_since = CASE WHEN $12::boolean THEN NULL ELSE $3::timestamptz END
        WHERE id = (SELECT subscription_id FROM webhook_deliveries WHERE id = $1)
          AND (failing_since IS NULL) = NOT $12::boolean
      )
      UPDATE webhook_deliveries
      SET status = $7, attempt_count = $8, next_attempt_at = $9, manual = CASE WHEN $10::boolean THEN manual ELSE false END,
          lease_owner = NULL, lease_until = NULL
      WHERE id = $1 AND lease_owner = $11`,
  },
  retry: {
    name: 'webhooks.retry',
    // Right-hand sides see the row as it was: a pending delivery is only brought
    // forward (its schedule goes on); a finished one gets exactly one more attempt.
    text: `
      UPDATE webhook_deliveries
      SET manual = CASE WHEN status = 'pending' THEN manual ELSE true END,
          status = 'pending',
          next_attempt_at = CASE WHEN status = 'pending' AND next_attempt_at < $1::timestamptz THEN next_attempt_at ELSE $1::timestamptz END
      WHERE subscription_id = $2 AND id = $3`,
  },
} as const;

/**
 * Retention: deletes up to $2 finished events created before $1, oldest first, with their deliveries (attempts
 * cascade), in one statement. Ids pass as `= ANY (ARRAY(...))`, which the planner looks up by index (joined to
 * a CTE, a table was read whole); migration 0003's indexes, plan checked by a test.
 *
 * It never waits for a row lock, so it cannot deadlock with other instances, dispatchers, retries or
 * unsubscribes: events and their finished deliveries are taken with SKIP LOCKED (locking re-checks `status`,
 * so a delivery a retry made pending is not taken), and an event goes only if every delivery it had in the
 * snapshot was locked here (deliveries are never added to an existing event). A retry arriving meanwhile
 * waits for the commit, then finds the delivery gone (404).
 */
export const PRUNE_FINISHED_EVENTS = {
  name: 'webhooks.prune',
  text: `
    WITH candidate AS MATERIALIZED (
      SELECT e.id FROM webhook_events e
      WHERE e.created_at < $1
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status = 'pending')
      ORDER BY e.created_at, e.id
      LIMIT $2
      FOR UPDATE SKIP LOCKED
    ), locked AS MATERIALIZED (
      SELECT d.id, d.event_id FROM webhook_deliveries d
      WHERE d.event_id = ANY (ARRAY(SELECT id FROM candidate)) AND d.status <> 'pending'
      FOR UPDATE SKIP LOCKED
    ), chosen AS MATERIALIZED (
      -- The candidates none of whose deliveries escaped the lock.
      SELECT id FROM candidate
      EXCEPT
      SELECT d.event_id FROM webhook_deliveries d
      WHERE d.event_id = ANY (ARRAY(SELECT id FROM candidate)) AND NOT EXISTS (SELECT 1 FROM locked l WHERE l.id = d.id)
    ), deliveries AS (
      DELETE FROM webhook_deliveries
      WHERE id = ANY (ARRAY(SELECT l.id FROM locked l JOIN chosen c ON c.id = l.event_id))
    ), events AS (
      DELETE FROM webhook_events WHERE id = ANY (ARRAY(SELECT id FROM chosen)) RETURNING 1
    )
    SELECT count(*)::int AS pruned FROM events`,
};

export class PostgresWebhookStore implements WebhookStore {
  constructor(private readonly pool: pg.Pool) {}

  async insertSubscription(s: NewWebhookSubscription): Promise<void> {
    await guarded(() =>
      this.pool.query({
        ...Q.insertSubscription,
        values: [
          s.id,
          s.url,
          s.description ?? null,
          s.eventTypes,
          s.secret,
          s.createdAt,
          s.tag ?? null,
          s.maxPerSecond ?? null,
        ],
      }),
    );
  }

  async listSubscriptions(): Promise<WebhookSubscription[]> {
    return (await guarded(async () => (await this.pool.query<SubscriptionRow>(Q.listSubscriptions)).rows)).map(
      toSubscription,
    );
  }

  async getSubscription(id: string): Promise<WebhookSubscription | undefined> {
    const row = await guarded(
      async () => (await this.pool.query<SubscriptionRow>({ ...Q.getSubscription, values: [id] })).rows[0],
    );
    return row === undefined ? undefined : toSubscription(row);
  }

  async rotateSecret(id: string, secret: string, previousSecretExpiresAt: Date | undefined): Promise<boolean> {
    const values = [secret, previousSecretExpiresAt ?? null, id];
    return guarded(async () => (await this.pool.query({ ...Q.rotateSecret, values })).rowCount === 1);
  }

  async updateSubscription(
    id: string,
    change: SubscriptionChange,
    expected: ExpectedSubscriptionVersion | undefined,
    now: Date,
  ): Promise<UpdateSubscriptionOutcome> {
    return inTransaction(this.pool, async (client) => {
      // The row lock makes concurrent writers expecting one version take turns: the second sees the new one.
      const row = (await client.query<SubscriptionRow>({ ...Q.lockSubscription, values: [id] })).rows[0];
      const outcome = this.changed(row, change, expected, now);
      if (outcome.kind === 'updated' && row !== undefined && outcome.subscription.version !== row.version) {
        const next = outcome.subscription;
        const values = [
          id,
          next.url,
          next.description ?? null,
          next.eventTypes,
          next.enabled,
          next.disabledAt ?? null,
          next.disabledReason ?? null,
          next.version,
          next.tag ?? null,
          next.maxPerSecond ?? null,
        ];
        await client.query({ ...Q.updateSubscription, values });
      }
      return outcome;
    });
  }

  private changed(
    row: SubscriptionRow | undefined,
    change: SubscriptionChange,
    expected: ExpectedSubscriptionVersion | undefined,
    now: Date,
  ): UpdateSubscriptionOutcome {
    if (row === undefined) return { kind: 'not-found' };
    const current = toSubscription(row);
    if (!versionAccepted(expected, current.version)) return { kind: 'precondition-failed', current };
    return { kind: 'updated', subscription: applySubscriptionChange(current, change, now) };
  }

  async deleteSubscription(id: string): Promise<boolean> {
    return guarded(async () => (await this.pool.query({ ...Q.deleteSubscription, values: [id] })).rowCount === 1);
  }

  async listDeliveries(
    subscriptionId: string,
    { limit, status, eventId, plantId }: ListDeliveriesQuery,
  ): Promise<WebhookDelivery[]> {
    const values = [subscriptionId, status ?? null, limit, eventId ?? null];
    const query =
      plantId === undefined
        ? { ...Q.listDeliveries, values }
        : { ...Q.listDeliveriesOfPlant, values: [...values, plantId.toString()] };
    const rows = await guarded(async () => (await this.pool.query<DeliveryRow>(query)).rows);
    return this.withAttempts(rows);
  }

  async getDelivery(subscriptionId: string, deliveryId: string): Promise<WebhookDelivery | undefined> {
    const rows = await guarded(
      async () => (await this.pool.query<DeliveryRow>({ ...Q.getDelivery, values: [subscriptionId, deliveryId] })).rows,
    );
    return (await this.withAttempts(rows))[0];
  }

  async backlog(now = new Date()): Promise<WebhookBacklog> {
    const row = await guarded(
      async () => (await this.pool.query<{ pending: number; oldest: Date | null }>(Q.backlog)).rows[0],
    );
    const oldest = row?.oldest ?? null;
    return {
      pending: row?.pending ?? 0,
      oldestPendingSeconds: oldest === null ? null : Math.max(0, (now.getTime() - oldest.getTime()) / 1000),
    };
  }

  async hasDueDeliveries(now: Date): Promise<boolean> {
    return guarded(async () => ((await this.pool.query({ ...Q.due, values: [now] })).rowCount ?? 0) > 0);
  }

  async claimDueDeliveries(request: ClaimRequest): Promise<ClaimedDelivery[]> {
    const { now, limit, leaseMs, owner } = request;
    const leaseUntil = new Date(now.getTime() + leaseMs);
    const inFlight = JSON.stringify(Object.fromEntries(request.inFlight ?? []));
    const values = [now, limit, owner, leaseUntil, request.perSubscription ?? limit, inFlight];
    const rows = await guarded(async () => (await this.pool.query<ClaimRow>({ ...Q.claim, values })).rows);
    return rows.map((row) => toClaimedDelivery(row, owner));
  }

  async recordAttempt({ deliveryId, leaseOwner, attempt, outcome, withoutRecord }: AttemptResult): Promise<void> {
    const update = deliveryUpdate(attempt.attempt, outcome);
    const values = [
      deliveryId,
      attempt.attempt,
      attempt.attemptedAt,
      attempt.responseStatus ?? null,
      Math.round(attempt.latencyMs),
      attempt.error ?? null,
      update.status,
      update.attemptCount,
      update.nextAttemptAt,
      update.keepManual,
      leaseOwner,
      outcome.kind === 'released' ? null : outcome.kind === 'succeeded',
      attempt.responseBody ?? null,
      attempt.responseContentType ?? null,
      withoutRecord === true,
    ];
    await guarded(() => this.pool.query({ ...Q.recordAttempt, values }));
  }

  async disableFailingSubscription(
    id: string,
    failingSince: Date,
    now: Date,
    reason: string,
  ): Promise<WebhookSubscription | undefined> {
    // In one transaction with the disable, so only the instance whose UPDATE matched emits, and exactly once.
    return inTransaction(this.pool, async (client) => {
      const row = (
        await client.query<SubscriptionRow>({ ...Q.disableFailing, values: [id, failingSince, now, reason] })
      ).rows[0];
      if (row === undefined) return undefined;
      const disabled = toSubscription(row);
      const event = webhookDisabledEvent(disabled);
      await client.query({ ...Q.emitOperational, values: [event.id, event.type, event.payload, now, id] });
      return disabled;
    });
  }

  async startRecovery(
    recovery: NewWebhookRecovery,
  ): Promise<{ recovery: WebhookRecovery; created: boolean } | undefined> {
    const { id, subscriptionId, windowKey, since, until, now } = recovery;
    const inserted = await guarded(
      async () =>
        (await this.pool.query({ ...Q.insertRecovery, values: [id, subscriptionId, windowKey, since, until, now] }))
          .rowCount,
    );
    const row = await guarded(
      async () =>
        (await this.pool.query<RecoveryRow>({ ...Q.recoveryOfWindow, values: [subscriptionId, windowKey] })).rows[0],
    );
    return row === undefined ? undefined : { recovery: toRecovery(row), created: inserted === 1 };
  }

  async signingKeys(id: string, now: Date): Promise<SigningKeys | undefined> {
    const row = await guarded(
      async () =>
        (
          await this.pool.query<{ url: string; secret: string; previous_secret: string | null }>({
            ...Q.signingKeys,
            values: [id, now],
          })
        ).rows[0],
    );
    return row === undefined ? undefined : signingKeysOf(row);
  }

  async getRecovery(subscriptionId: string, id: string): Promise<WebhookRecovery | undefined> {
    const row = await guarded(
      async () => (await this.pool.query<RecoveryRow>({ ...Q.getRecovery, values: [subscriptionId, id] })).rows[0],
    );
    return row === undefined ? undefined : toRecovery(row);
  }

  async staleRecoveries(before: Date): Promise<string[]> {
    const { rows } = await guarded(() => this.pool.query<{ id: string }>({ ...Q.staleRecoveries, values: [before] }));
    return rows.map((row) => row.id);
  }

  async recoverBatch(id: string, now: Date, limit: number): Promise<WebhookRecovery | undefined> {
    return inTransaction(this.pool, async (client) => {
      const job = (await client.query<RecoveryRow>({ ...Q.lockRecovery, values: [id] })).rows[0];
      if (job === undefined) return undefined;
      if (job.status === 'done') return toRecovery(job);
      const values = [job.subscription_id, job.since, job.until, job.cursor_at, job.cursor_id, limit, now];
      const batch = (
        await client.query<{ requeued: number; seen: number; cursor_at: Date | null; cursor_id: string | null }>({
          ...Q.recoverBatch,
          values,
        })
      ).rows[0];
      const advanced = [id, batch?.requeued ?? 0, batch?.cursor_at ?? null, batch?.cursor_id ?? null, now];
      const done = (batch?.seen ?? 0) < limit;
      const row = (await client.query<RecoveryRow>({ ...Q.advanceRecovery, values: [...advanced, done] })).rows[0];
      return row === undefined ? undefined : toRecovery(row);
    });
  }

  async retryDelivery(subscriptionId: string, deliveryId: string, now: Date): Promise<WebhookDelivery | undefined> {
    const changed = await guarded(
      async () => (await this.pool.query({ ...Q.retry, values: [now, subscriptionId, deliveryId] })).rowCount,
    );
    return changed === 0 ? undefined : this.getDelivery(subscriptionId, deliveryId);
  }

  async pruneFinishedEvents(before: Date, limit: number): Promise<number> {
    const rows = await guarded(
      async () =>
        (await this.pool.query<{ pruned: number }>({ ...PRUNE_FINISHED_EVENTS, values: [before, limit] })).rows,
    );
    return rows[0]?.pruned ?? 0;
  }

  private async withAttempts(rows: DeliveryRow[]): Promise<WebhookDelivery[]> {
    if (rows.length === 0) return [];
    const ids = rows.map((r) => r.id);
    const attempts = await guarded(
      async () => (await this.pool.query<AttemptRow>({ ...Q.attemptsOf, values: [ids] })).rows,
    );
    return attachAttempts(rows, attempts);
  }
}
