/**
 * Webhook subscriptions and the delivery outbox on SQLite. Claims run in an IMMEDIATE transaction, holding the
 * single write lock, so two dispatchers (even in two processes) never lease one delivery.
 */
import type Database from 'better-sqlite3';
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
import {
  PLANT_CREATED,
  PLANT_DELETED,
  PLANT_UPDATED,
  plantCreatedEvent,
  plantDeletedEvent,
  plantUpdatedEvent,
  webhookDisabledEvent,
  type EventType,
  type PlantEvent,
} from '../../domain/events.js';
import { deliveryUpdate } from '../core/delivery-update.js';
import { applySubscriptionChange, versionAccepted } from '../core/subscription-change.js';
import { guarded } from './errors.js';
import { chooseClaim, type DueRow, type ThrottleRow } from './claim-choice.js';
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

type SubscriptionRow = SubscriptionRows<number>;
type DeliveryRow = DeliveryRows<number>;
type AttemptRow = AttemptRows<number>;
type RecoveryRow = RecoveryRows<number>;
const { toSubscription, toRecovery, attachAttempts } = webhookRowMappers<number>((ms) => new Date(ms));

/**
 * A subscription's deliveries of one plant. Its events name it in their payload: found by the webhook_events_plant
 * index (migration 18), then their deliveries by event. The unary + keeps SQLite from walking the subscription's
 * whole log instead, in the order the answer wants. Each other filter applies only when given.
 */
export const DELIVERIES_OF_PLANT_SQL = `SELECT ${DELIVERY_COLUMNS} FROM ${DELIVERY_FROM}
  WHERE json_extract(e.payload, '$.id') = @plantId AND +d.subscription_id = @subscriptionId
    AND (@status IS NULL OR d.status = @status) AND (@eventId IS NULL OR d.event_id = @eventId)
  ORDER BY d.created_at DESC, d.rowid DESC LIMIT @limit`;

/**
 * Retention's statements (indexes: migration 3; a test checks their plans). An
 * event is finished when none of its deliveries is pending; the chosen ids go to
 * the deletes as one JSON array, as in attemptsOf.
 */
export const PRUNE_SQL = {
  prunableEvents: `SELECT e.id FROM webhook_events e
    WHERE e.created_at < ? AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status = 'pending')
    ORDER BY e.created_at, e.rowid LIMIT ?`,
  attempts: `DELETE FROM webhook_delivery_attempts
    WHERE delivery_id IN (SELECT id FROM webhook_deliveries WHERE event_id IN (SELECT value FROM json_each(?)))`,
  deliveries: 'DELETE FROM webhook_deliveries WHERE event_id IN (SELECT value FROM json_each(?))',
  events: 'DELETE FROM webhook_events WHERE id IN (SELECT value FROM json_each(?))',
} as const;

/** A pending delivery's subscription is enabled: a disabled one's deliveries wait, kept, until it is enabled. */
const OF_ENABLED =
  'EXISTS (SELECT 1 FROM webhook_subscriptions s WHERE s.id = webhook_deliveries.subscription_id AND s.enabled)';

/** Whether `types` (a subscription's comma-separated event_types) holds the type named by the parameter. */
const SUBSCRIBED_TO = "instr(',' || event_types || ',', ',' || @type || ',') > 0";

/**
 * The plant writes' half of the outbox, written in the change's own transaction so both commit or roll back
 * together. With no subscription to its type nothing is written, so the outbox does not grow unheard.
 */
export class SqliteWebhookOutbox {
  private readonly subscribedTypes: Database.Statement;
  private readonly insertEvent: Database.Statement;
  private readonly insertDeliveries: Database.Statement;

  constructor(db: Database.Database) {
    this.subscribedTypes = db.prepare('SELECT DISTINCT event_types FROM webhook_subscriptions').pluck();
    this.insertEvent = db.prepare(
      `INSERT INTO webhook_events (id, type, payload, created_at, tag, previous_tag)
       VALUES (@id, @type, @payload, @now, @tag, @previousTag)`,
    );
    // A tag filter passes a plant event whose plant has the tag after the change or had it before.
    this.insertDeliveries = db.prepare(
      `INSERT INTO webhook_deliveries (id, event_id, subscription_id, status, attempt_count, manual, next_attempt_at, created_at)
       SELECT 'dlv_' || lower(hex(randomblob(16))), @id, id, 'pending', 0, 0, @now, @now FROM webhook_subscriptions
       WHERE ${SUBSCRIBED_TO} AND (tag IS NULL OR tag = @tag OR tag = @previousTag)`,
    );
  }

  /**
   * The outbox of one batch. Which types anybody subscribes to is asked once per
   * batch, not per change: building an event (random id, JSON) costs as much as the
   * insert. Exact: the batch's transaction holds the write lock, so no subscription
   * can appear (from this process or another) before it commits.
   */
  forBatch(now = Date.now()) {
    const types = new Set((this.subscribedTypes.all() as string[]).flatMap((list) => list.split(',')));
    // The event is built only when somebody subscribes to its type.
    // tag: the plant's after the change (a deletion's: the one it had); previousTag: the one an update replaced.
    const emit = (type: EventType, event: () => PlantEvent, tag: string | null, previousTag: string | null) => {
      if (!types.has(type)) return;
      const { id, payload } = event();
      this.insertEvent.run({ id, type, payload, now, tag, previousTag });
      this.insertDeliveries.run({ id, type, now, tag, previousTag });
    };
    return {
      /** Whether any subscription chose this type (a bulk write can skip reading back what it wrote). */
      wants: (type: EventType) => types.has(type),
      created: (plant: PlantRecord) => emit(PLANT_CREATED, () => plantCreatedEvent(plant), plant.tag ?? null, null),
      updated: (before: PlantRecord, after: PlantRecord) =>
        emit(PLANT_UPDATED, () => plantUpdatedEvent(after), after.tag ?? null, before.tag ?? null),
      deleted: (id: bigint, tag: string | null) => emit(PLANT_DELETED, () => plantDeletedEvent(id), tag, null),
    };
  }
}

export class SqliteWebhookStore implements WebhookStore {
  private readonly statements;
  private readonly claimAtomically: Database.Transaction<(request: ClaimRequest) => ClaimRow[]>;
  private readonly recordAtomically: Database.Transaction<(result: AttemptResult) => void>;
  private readonly deleteAtomically: Database.Transaction<(id: string) => boolean>;
  private readonly disableAtomically: Database.Transaction<
    (id: string, failingSince: number, now: number, reason: string) => WebhookSubscription | undefined
  >;
  private readonly updateAtomically: Database.Transaction<
    (
      id: string,
      change: SubscriptionChange,
      expected: ExpectedSubscriptionVersion | undefined,
      now: Date,
    ) => UpdateSubscriptionOutcome
  >;
  private readonly recoverAtomically: Database.Transaction<
    (id: string, now: number, limit: number) => WebhookRecovery | undefined
  >;
  private readonly pruneAtomically: Database.Transaction<(before: number, limit: number) => number>;

  constructor(db: Database.Database) {
    const s = {
      insertSubscription: db.prepare(
        'INSERT INTO webhook_subscriptions (id, url, description, event_types, secret, created_at, tag, max_per_second) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      listSubscriptions: db.prepare(
        `SELECT ${SUBSCRIPTION_COLUMNS} FROM webhook_subscriptions ORDER BY created_at, rowid`,
      ),
      getSubscription: db.prepare(`SELECT ${SUBSCRIPTION_COLUMNS} FROM webhook_subscriptions WHERE id = ?`),
      updateSubscription: db.prepare(
        `UPDATE webhook_subscriptions
         SET url = @url, description = @description, event_types = @eventTypes, enabled = @enabled,
             disabled_at = @disabledAt, disabled_reason = @disabledReason, version = @version, tag = @tag,
             max_per_second = @maxPerSecond,
             -- Enabled again: its failing time starts afresh (right-hand sides see the row as it was).
             failing_since = CASE WHEN @enabled = 1 AND enabled = 0 THEN NULL ELSE failing_since END
         WHERE id = @id`,
      ),
      // Written only when the health changes: a steady subscription costs no write here.
      markHealth: db.prepare(
        `UPDATE webhook_subscriptions SET failing_since = CASE WHEN @ok = 1 THEN NULL ELSE @at END
         WHERE id = (SELECT subscription_id FROM webhook_deliveries WHERE id = @deliveryId)
           AND CASE WHEN @ok = 1 THEN failing_since IS NOT NULL ELSE failing_since IS NULL END`,
      ),
      disableFailing: db.prepare(
        `UPDATE webhook_subscriptions
         SET enabled = 0, disabled_at = @now, disabled_reason = @reason, version = version + 1
         WHERE id = @id AND enabled = 1 AND failing_since <= @failingSince
         RETURNING ${SUBSCRIPTION_COLUMNS}`,
      ),
      // A webhook.disabled event goes to the other subscriptions that chose its type, and into the change log.
      operationalEvent: db.prepare(
        `INSERT INTO webhook_events (id, type, payload, created_at)
         SELECT @id, @type, @payload, @now WHERE EXISTS (SELECT 1 FROM webhook_subscriptions WHERE ${SUBSCRIBED_TO} AND id <> @disabled)`,
      ),
      operationalDeliveries: db.prepare(
        `INSERT INTO webhook_deliveries (id, event_id, subscription_id, status, attempt_count, manual, next_attempt_at, created_at)
         SELECT 'dlv_' || lower(hex(randomblob(16))), @id, id, 'pending', 0, 0, @now, @now FROM webhook_subscriptions
         WHERE ${SUBSCRIBED_TO} AND id <> @disabled AND EXISTS (SELECT 1 FROM webhook_events WHERE id = @id)`,
      ),
      // Not about a plant: plant_id 0. Stamped with the clock, as the plant writes' entries are, for retention.
      operationalChange: db.prepare(
        'INSERT INTO plant_changes (type, plant_id, tag, payload, created_at) VALUES (@type, 0, NULL, @payload, @at)',
      ),
      deleteAttempts: db.prepare(
        'DELETE FROM webhook_delivery_attempts WHERE delivery_id IN (SELECT id FROM webhook_deliveries WHERE subscription_id = ?)',
      ),
      deleteDeliveries: db.prepare('DELETE FROM webhook_deliveries WHERE subscription_id = ?'),
      deleteSubscription: db.prepare('DELETE FROM webhook_subscriptions WHERE id = ?'),
      // Right-hand sides see the row as it was: the current secret becomes the previous
      // one (replacing any older), unless there is no overlap, when none is kept.
      rotateSecret: db.prepare(
        `UPDATE webhook_subscriptions
         SET previous_secret = CASE WHEN ? IS NULL THEN NULL ELSE secret END, secret = ?, previous_secret_expires_at = ?
         WHERE id = ?`,
      ),
      listDeliveries: db.prepare(
        `SELECT ${DELIVERY_COLUMNS} FROM ${DELIVERY_FROM} WHERE d.subscription_id = ? ORDER BY d.created_at DESC, d.rowid DESC LIMIT ?`,
      ),
      listDeliveriesByStatus: db.prepare(
        `SELECT ${DELIVERY_COLUMNS} FROM ${DELIVERY_FROM} WHERE d.subscription_id = ? AND d.status = ? ORDER BY d.created_at DESC, d.rowid DESC LIMIT ?`,
      ),
      listDeliveriesOfPlant: db.prepare(DELIVERIES_OF_PLANT_SQL),
      deliveryOfEvent: db.prepare(
        `SELECT ${DELIVERY_COLUMNS} FROM ${DELIVERY_FROM} WHERE d.subscription_id = ? AND d.event_id = ?`,
      ),
      getDelivery: db.prepare(
        `SELECT ${DELIVERY_COLUMNS} FROM ${DELIVERY_FROM} WHERE d.subscription_id = ? AND d.id = ?`,
      ),
      attemptsOf: db.prepare(
        `SELECT delivery_id, attempt, attempted_at, response_status, latency_ms, error, response_body, response_content_type
         FROM webhook_delivery_attempts
         WHERE delivery_id IN (SELECT value FROM json_each(?)) ORDER BY id`,
      ),
      backlog: db.prepare(
        `SELECT count(*) AS pending, min(created_at) AS oldest FROM webhook_deliveries WHERE status = 'pending'`,
      ),
      due: db
        .prepare(
          `SELECT 1 FROM webhook_deliveries
         WHERE status = 'pending' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until <= ?) AND ${OF_ENABLED}
         LIMIT 1`,
        )
        .pluck(),
      claimable: db.prepare(
        `SELECT id, max_per_second, throttle_last_at, throttle_count FROM webhook_subscriptions WHERE enabled = 1`,
      ),
      // One subscription's due deliveries, oldest due first (the (subscription_id, next_attempt_at) index).
      dueOf: db.prepare(
        `SELECT id, next_attempt_at FROM webhook_deliveries
         WHERE subscription_id = ? AND status = 'pending' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until <= ?)
         ORDER BY next_attempt_at LIMIT ?`,
      ),
      lease: db.prepare('UPDATE webhook_deliveries SET lease_owner = ?, lease_until = ? WHERE id = ?'),
      meter: db.prepare('UPDATE webhook_subscriptions SET throttle_count = ?, throttle_last_at = ? WHERE id = ?'),
      claimed: db.prepare(
        `SELECT d.id, d.subscription_id, d.event_id, e.type, e.payload, s.url, s.secret,
                CASE WHEN s.previous_secret_expires_at > ? THEN s.previous_secret END AS previous_secret, d.attempt_count, d.manual
         FROM webhook_deliveries d
         JOIN webhook_events e ON e.id = d.event_id
         JOIN webhook_subscriptions s ON s.id = d.subscription_id
         WHERE d.id = ?`,
      ),
      insertAttempt: db.prepare(
        `INSERT INTO webhook_delivery_attempts
           (delivery_id, attempt, attempted_at, response_status, latency_ms, error, response_body, response_content_type)
         SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM webhook_deliveries WHERE id = ?)`,
      ),
      applyOutcome: db.prepare(
        `UPDATE webhook_deliveries
         SET status = ?, attempt_count = ?, next_attempt_at = ?, manual = CASE WHEN ? THEN manual ELSE 0 END,
             lease_owner = NULL, lease_until = NULL
         WHERE id = ? AND lease_owner = ?`,
      ),
      retry: db.prepare(
        // Right-hand sides see the row as it was: a pending delivery is only brought
        // forward (its schedule goes on); a finished one gets exactly one more attempt.
        `UPDATE webhook_deliveries
         SET manual = CASE WHEN status = 'pending' THEN manual ELSE 1 END,
             status = 'pending',
             next_attempt_at = CASE WHEN status = 'pending' AND next_attempt_at < ? THEN next_attempt_at ELSE ? END
         WHERE subscription_id = ? AND id = ?`,
      ),
      signingKeys: db.prepare(
        `SELECT url, secret, CASE WHEN previous_secret_expires_at > ? THEN previous_secret END AS previous_secret
         FROM webhook_subscriptions WHERE id = ?`,
      ),
      insertRecovery: db.prepare(
        `INSERT INTO webhook_recoveries (id, subscription_id, window_key, since, until, status, created_at, updated_at)
         SELECT @id, @subscriptionId, @windowKey, @since, @until, 'running', @now, @now
         WHERE EXISTS (SELECT 1 FROM webhook_subscriptions WHERE id = @subscriptionId)
         ON CONFLICT (subscription_id, window_key) DO NOTHING`,
      ),
      recoveryOfWindow: db.prepare(
        `SELECT ${RECOVERY_COLUMNS} FROM webhook_recoveries WHERE subscription_id = ? AND window_key = ?`,
      ),
      getRecovery: db.prepare(
        `SELECT ${RECOVERY_COLUMNS} FROM webhook_recoveries WHERE subscription_id = ? AND id = ?`,
      ),
      recoveryById: db.prepare(`SELECT ${RECOVERY_COLUMNS} FROM webhook_recoveries WHERE id = ?`),
      staleRecoveries: db
        .prepare("SELECT id FROM webhook_recoveries WHERE status = 'running' AND updated_at < ? ORDER BY created_at")
        .pluck(),
      // The window's deliveries after the cursor, by the subscription's (subscription_id, created_at) index.
      recoveryCandidates: db.prepare(
        `SELECT id, created_at, status FROM webhook_deliveries
         WHERE subscription_id = @subscriptionId AND created_at >= @since AND created_at < @until
           AND (@cursorAt IS NULL OR created_at > @cursorAt OR (created_at = @cursorAt AND id > @cursorId))
         ORDER BY created_at, id LIMIT @limit`,
      ),
      requeue: db.prepare(
        `UPDATE webhook_deliveries SET status = 'pending', manual = 1, next_attempt_at = @now
         WHERE id IN (SELECT value FROM json_each(@ids)) AND status = 'failed'`,
      ),
      advanceRecovery: db.prepare(
        `UPDATE webhook_recoveries
         SET requeued = requeued + @requeued, cursor_at = @cursorAt, cursor_id = @cursorId, updated_at = @now,
             status = CASE WHEN @done = 1 THEN 'done' ELSE status END,
             finished_at = CASE WHEN @done = 1 THEN @now ELSE finished_at END
         WHERE id = @id
         RETURNING ${RECOVERY_COLUMNS}`,
      ),
      prunableEvents: db.prepare(PRUNE_SQL.prunableEvents).pluck(),
      pruneAttempts: db.prepare(PRUNE_SQL.attempts),
      pruneDeliveries: db.prepare(PRUNE_SQL.deliveries),
      pruneEvents: db.prepare(PRUNE_SQL.events),
    };
    this.statements = s;

    this.claimAtomically = db.transaction((request: ClaimRequest) => {
      const at = request.now.getTime();
      const chosen = chooseClaim(
        s.claimable.all() as ThrottleRow[],
        request,
        (id, allowance) => s.dueOf.all(id, at, at, allowance) as DueRow[],
      );
      for (const due of chosen.deliveries) s.lease.run(request.owner, at + request.leaseMs, due.id);
      for (const [id, count] of chosen.meters) s.meter.run(count, at, id);
      return chosen.deliveries
        .map((due) => s.claimed.get(at, due.id) as ClaimRow | undefined)
        .filter((row): row is ClaimRow => row !== undefined);
    });

    this.recordAtomically = db.transaction((result: AttemptResult) => {
      const { deliveryId, leaseOwner, attempt, outcome } = result;
      if (result.withoutRecord !== true)
        s.insertAttempt.run(
          deliveryId,
          attempt.attempt,
          attempt.attemptedAt.getTime(),
          attempt.responseStatus ?? null,
          Math.round(attempt.latencyMs),
          attempt.error ?? null,
          attempt.responseBody ?? null,
          attempt.responseContentType ?? null,
          deliveryId,
        );
      if (outcome.kind !== 'released')
        s.markHealth.run({ ok: outcome.kind === 'succeeded' ? 1 : 0, at: attempt.attemptedAt.getTime(), deliveryId });
      const update = deliveryUpdate(attempt.attempt, outcome);
      s.applyOutcome.run(
        update.status,
        update.attemptCount,
        update.nextAttemptAt?.getTime() ?? null,
        update.keepManual ? 1 : 0,
        deliveryId,
        leaseOwner,
      );
    });

    // Read, check and write under the write lock: of concurrent writers expecting one version, one wins.
    this.updateAtomically = db.transaction(
      (
        id: string,
        change: SubscriptionChange,
        expected: ExpectedSubscriptionVersion | undefined,
        now: Date,
      ): UpdateSubscriptionOutcome => {
        const row = s.getSubscription.get(id) as SubscriptionRow | undefined;
        if (row === undefined) return { kind: 'not-found' };
        const current = toSubscription(row);
        if (!versionAccepted(expected, current.version)) return { kind: 'precondition-failed', current };
        const next = applySubscriptionChange(current, change, now);
        if (next !== current)
          s.updateSubscription.run({
            id,
            url: next.url,
            description: next.description ?? null,
            eventTypes: next.eventTypes.join(','),
            enabled: next.enabled ? 1 : 0,
            disabledAt: next.disabledAt?.getTime() ?? null,
            disabledReason: next.disabledReason ?? null,
            version: next.version,
            tag: next.tag ?? null,
            maxPerSecond: next.maxPerSecond ?? null,
          });
        return { kind: 'updated', subscription: next };
      },
    );

    // The disable and its event commit together: only the caller whose UPDATE matched emits, exactly once.
    this.disableAtomically = db.transaction((id: string, failingSince: number, now: number, reason: string) => {
      const row = s.disableFailing.get({ id, failingSince, now, reason }) as SubscriptionRow | undefined;
      if (row === undefined) return undefined;
      const disabled = toSubscription(row);
      const { id: eventId, type, payload } = webhookDisabledEvent(disabled);
      s.operationalEvent.run({ id: eventId, type, payload, now, disabled: id });
      s.operationalDeliveries.run({ id: eventId, type, now, disabled: id });
      s.operationalChange.run({ type, payload, at: Date.now() });
      return disabled;
    });

    this.deleteAtomically = db.transaction((id: string) => {
      s.deleteAttempts.run(id);
      s.deleteDeliveries.run(id);
      return s.deleteSubscription.run(id).changes === 1;
    });

    this.recoverAtomically = db.transaction((id: string, now: number, limit: number) => {
      const job = s.recoveryById.get(id) as RecoveryRow | undefined;
      if (job === undefined) return undefined;
      if (job.status === 'done') return toRecovery(job);
      const candidates = s.recoveryCandidates.all({
        subscriptionId: job.subscription_id,
        since: job.since,
        until: job.until,
        cursorAt: job.cursor_at,
        cursorId: job.cursor_id,
        limit,
      }) as { id: string; created_at: number; status: string }[];
      const failed = candidates.filter((c) => c.status === 'failed').map((c) => c.id);
      const requeued = failed.length === 0 ? 0 : s.requeue.run({ ids: JSON.stringify(failed), now }).changes;
      const last = candidates.at(-1);
      const row = s.advanceRecovery.get({
        id,
        requeued,
        cursorAt: last?.created_at ?? job.cursor_at,
        cursorId: last?.id ?? job.cursor_id,
        now,
        done: candidates.length < limit ? 1 : 0,
      }) as RecoveryRow;
      return toRecovery(row);
    });

    // Choosing and deleting in one IMMEDIATE transaction: no delivery can be made
    // pending again (a manual retry) between the two. Children go first: better-sqlite3
    // enforces foreign keys.
    this.pruneAtomically = db.transaction((before: number, limit: number) => {
      const ids = JSON.stringify(s.prunableEvents.all(before, limit));
      s.pruneAttempts.run(ids);
      s.pruneDeliveries.run(ids);
      return s.pruneEvents.run(ids).changes;
    });
  }

  async insertSubscription(subscription: NewWebhookSubscription): Promise<void> {
    guarded(() =>
      this.statements.insertSubscription.run(
        subscription.id,
        subscription.url,
        subscription.description ?? null,
        subscription.eventTypes.join(','),
        subscription.secret,
        subscription.createdAt.getTime(),
        subscription.tag ?? null,
        subscription.maxPerSecond ?? null,
      ),
    );
  }

  async listSubscriptions(): Promise<WebhookSubscription[]> {
    return (guarded(() => this.statements.listSubscriptions.all()) as SubscriptionRow[]).map(toSubscription);
  }

  async getSubscription(id: string): Promise<WebhookSubscription | undefined> {
    const row = guarded(() => this.statements.getSubscription.get(id)) as SubscriptionRow | undefined;
    return row === undefined ? undefined : toSubscription(row);
  }

  async rotateSecret(id: string, secret: string, previousSecretExpiresAt: Date | undefined): Promise<boolean> {
    const expiresAt = previousSecretExpiresAt?.getTime() ?? null;
    return guarded(() => this.statements.rotateSecret.run(expiresAt, secret, expiresAt, id)).changes === 1;
  }

  async updateSubscription(
    id: string,
    change: SubscriptionChange,
    expected: ExpectedSubscriptionVersion | undefined,
    now: Date,
  ): Promise<UpdateSubscriptionOutcome> {
    return guarded(() => this.updateAtomically.immediate(id, change, expected, now));
  }

  async deleteSubscription(id: string): Promise<boolean> {
    return guarded(() => this.deleteAtomically.immediate(id));
  }

  async listDeliveries(
    subscriptionId: string,
    { limit, status, eventId, plantId }: ListDeliveriesQuery,
  ): Promise<WebhookDelivery[]> {
    if (plantId !== undefined) {
      const rows = guarded(() =>
        this.statements.listDeliveriesOfPlant.all({
          subscriptionId,
          plantId,
          status: status ?? null,
          eventId: eventId ?? null,
          limit,
        }),
      ) as DeliveryRow[];
      return this.withAttempts(rows);
    }
    if (eventId !== undefined) {
      // An event has one delivery per subscription.
      const rows = guarded(() => this.statements.deliveryOfEvent.all(subscriptionId, eventId)) as DeliveryRow[];
      return this.withAttempts(rows.filter((row) => status === undefined || row.status === status));
    }
    const rows = guarded(() =>
      status === undefined
        ? this.statements.listDeliveries.all(subscriptionId, limit)
        : this.statements.listDeliveriesByStatus.all(subscriptionId, status, limit),
    ) as DeliveryRow[];
    return this.withAttempts(rows);
  }

  async getDelivery(subscriptionId: string, deliveryId: string): Promise<WebhookDelivery | undefined> {
    const row = guarded(() => this.statements.getDelivery.get(subscriptionId, deliveryId)) as DeliveryRow | undefined;
    return row === undefined ? undefined : this.withAttempts([row])[0];
  }

  async backlog(now = new Date()): Promise<WebhookBacklog> {
    const row = guarded(() => this.statements.backlog.get()) as { pending: number; oldest: number | null };
    return {
      pending: row.pending,
      oldestPendingSeconds: row.oldest === null ? null : Math.max(0, (now.getTime() - row.oldest) / 1000),
    };
  }

  async hasDueDeliveries(now: Date): Promise<boolean> {
    return guarded(() => this.statements.due.get(now.getTime(), now.getTime())) !== undefined;
  }

  async claimDueDeliveries(request: ClaimRequest): Promise<ClaimedDelivery[]> {
    const rows = guarded(() => this.claimAtomically.immediate(request));
    return rows.map((row) => toClaimedDelivery(row, request.owner));
  }

  async recordAttempt(result: AttemptResult): Promise<void> {
    guarded(() => this.recordAtomically.immediate(result));
  }

  async disableFailingSubscription(
    id: string,
    failingSince: Date,
    now: Date,
    reason: string,
  ): Promise<WebhookSubscription | undefined> {
    return guarded(() => this.disableAtomically.immediate(id, failingSince.getTime(), now.getTime(), reason));
  }

  async startRecovery(
    recovery: NewWebhookRecovery,
  ): Promise<{ recovery: WebhookRecovery; created: boolean } | undefined> {
    const created =
      guarded(() =>
        this.statements.insertRecovery.run({
          id: recovery.id,
          subscriptionId: recovery.subscriptionId,
          windowKey: recovery.windowKey,
          since: recovery.since.getTime(),
          until: recovery.until.getTime(),
          now: recovery.now.getTime(),
        }),
      ).changes === 1;
    const row = guarded(() => this.statements.recoveryOfWindow.get(recovery.subscriptionId, recovery.windowKey)) as
      RecoveryRow | undefined;
    return row === undefined ? undefined : { recovery: toRecovery(row), created };
  }

  async signingKeys(id: string, now: Date): Promise<SigningKeys | undefined> {
    const row = guarded(() => this.statements.signingKeys.get(now.getTime(), id)) as
      { url: string; secret: string; previous_secret: string | null } | undefined;
    return row === undefined ? undefined : signingKeysOf(row);
  }

  async getRecovery(subscriptionId: string, id: string): Promise<WebhookRecovery | undefined> {
    const row = guarded(() => this.statements.getRecovery.get(subscriptionId, id)) as RecoveryRow | undefined;
    return row === undefined ? undefined : toRecovery(row);
  }

  async staleRecoveries(before: Date): Promise<string[]> {
    return guarded(() => this.statements.staleRecoveries.all(before.getTime())) as string[];
  }

  async recoverBatch(id: string, now: Date, limit: number): Promise<WebhookRecovery | undefined> {
    return guarded(() => this.recoverAtomically.immediate(id, now.getTime(), limit));
  }

  async retryDelivery(subscriptionId: string, deliveryId: string, now: Date): Promise<WebhookDelivery | undefined> {
    const at = now.getTime();
    const changed = guarded(() => this.statements.retry.run(at, at, subscriptionId, deliveryId)).changes;
    return changed === 0 ? undefined : this.getDelivery(subscriptionId, deliveryId);
  }

  async pruneFinishedEvents(before: Date, limit: number): Promise<number> {
    return guarded(() => this.pruneAtomically.immediate(before.getTime(), limit));
  }

  private withAttempts(rows: DeliveryRow[]): WebhookDelivery[] {
    if (rows.length === 0) return [];
    const attempts = guarded(() =>
      this.statements.attemptsOf.all(JSON.stringify(rows.map((r) => r.id))),
    ) as AttemptRow[];
    return attachAttempts(rows, attempts);
  }
}
