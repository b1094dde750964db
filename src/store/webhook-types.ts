/**
 * What the webhook feature needs from a store: subscriptions and the outbox of events and deliveries. Events
 * are written by the plant writes, in the plant's own transaction. Ids are opaque strings (whk_, msg_, dlv_).
 */
import type { EventType } from '../domain/events.js';

export interface WebhookSubscription {
  readonly id: string;
  readonly url: string;
  /** The event types it receives (at least one). */
  readonly eventTypes: readonly EventType[];
  /** Undefined when none was given. */
  readonly description?: string;
  /** Only events of plants with this tag after the change or before it; undefined: every plant. */
  readonly tag?: string;
  readonly createdAt: Date;
  /** Counts its changes from 1: the subscription's ETag. */
  readonly version: number;
  /** A disabled subscription's deliveries wait (their events are kept) until it is enabled again. */
  readonly enabled: boolean;
  /** When and why it was disabled; undefined while enabled. */
  readonly disabledAt?: Date;
  readonly disabledReason?: string;
  /** At most this many deliveries started in any one second (across instances); undefined: unlimited. */
  readonly maxPerSecond?: number;
}

/** What a PATCH changes; what is left out is kept. `description: null` removes it. */
export interface SubscriptionChange {
  readonly url?: string;
  readonly description?: string | null;
  readonly eventTypes?: readonly EventType[];
  /** null removes the tag filter. */
  readonly tag?: string | null;
  readonly enabled?: boolean;
  /** Recorded when this change disables an enabled subscription. */
  readonly disabledReason?: string;
  /** A new throttle; null removes it. */
  readonly maxPerSecond?: number | null;
}

/** What If-Match accepts: any version, or one of these. */
export type ExpectedSubscriptionVersion = 'any' | readonly number[];

export type UpdateSubscriptionOutcome =
  | { readonly kind: 'updated'; readonly subscription: WebhookSubscription }
  | { readonly kind: 'not-found' }
  | { readonly kind: 'precondition-failed'; readonly current: WebhookSubscription };

/** A subscription to insert: enabled, at version 1. */
export interface NewWebhookSubscription {
  readonly id: string;
  readonly url: string;
  readonly eventTypes: readonly EventType[];
  readonly description?: string;
  readonly tag?: string;
  readonly createdAt: Date;
  /** The signing secret (whsec_...): kept in clear, since every delivery is signed with it. */
  readonly secret: string;
  readonly maxPerSecond?: number;
}

/** The outbox row of one event (src/domain/events.ts). */
export type { EventPlant, PlantCreatedEvent, PlantEvent } from '../domain/events.js';
import type { EventPlant } from '../domain/events.js';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface DeliveryAttempt {
  /** 1 for the first attempt; an attempt interrupted by a shutdown keeps the number it had. */
  readonly attempt: number;
  readonly attemptedAt: Date;
  /** The subscriber's HTTP status; undefined when no response came (timeout, refused...). */
  readonly responseStatus?: number;
  readonly latencyMs: number;
  /** Why the attempt did not acknowledge; undefined for a 2xx. */
  readonly error?: string;
  /** The first 1 KiB of the response body and its Content-Type; undefined when no response came. */
  readonly responseBody?: string;
  readonly responseContentType?: string;
}

export interface WebhookDelivery {
  readonly id: string;
  readonly subscriptionId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly status: DeliveryStatus;
  /** Completed attempts (interrupted ones are logged but not counted). */
  readonly attemptCount: number;
  /** When the next attempt is due; undefined unless pending. */
  readonly nextAttemptAt?: Date;
  readonly createdAt: Date;
  readonly attempts: readonly DeliveryAttempt[];
  /** The plant the event is about, as its payload has it; undefined for an event not about a plant. */
  readonly plant?: EventPlant;
}

/** A due delivery leased to one dispatcher, with everything needed to send it. */
export interface ClaimedDelivery {
  readonly deliveryId: string;
  readonly subscriptionId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly payload: string;
  readonly url: string;
  readonly secret: string;
  /**
   * The secret replaced by the last rotation, while its overlap lasts (at claim
   * time): the attempt is signed with both, so receivers still holding it verify.
   */
  readonly previousSecret?: string;
  /** The number this attempt will have (completed attempts + 1). */
  readonly attempt: number;
  /** True when this attempt was asked for by hand: it is then the only one. */
  readonly manual: boolean;
  /** Who holds the lease; results are applied only by the holder. */
  readonly leaseOwner: string;
}

export interface ClaimRequest {
  /**
   * What is due and when the lease ends are by this time. A throttle's runs are too on SQLite (one writer, one
   * clock); PostgreSQL meters them by its own clock, which every instance shares.
   */
  readonly now: Date;
  readonly limit: number;
  /** How long the claim keeps other dispatchers off these deliveries. */
  readonly leaseMs: number;
  readonly owner: string;
  /**
   * Most deliveries of one subscription this dispatcher may have in flight while another subscription has
   * deliveries due (default: `limit`), so one subscription's backlog or slow receiver cannot take every slot;
   * `inFlight` counts those it has, by subscription. A subscription alone with deliveries due may use every slot.
   */
  readonly perSubscription?: number;
  readonly inFlight?: ReadonlyMap<string, number>;
}

export type AttemptOutcome =
  | { readonly kind: 'succeeded' }
  | { readonly kind: 'retry'; readonly nextAttemptAt: Date }
  | { readonly kind: 'failed' }
  /** The attempt was cut short by a shutdown: due again at once, and not counted. */
  | { readonly kind: 'released'; readonly nextAttemptAt: Date };

export interface AttemptResult {
  readonly deliveryId: string;
  readonly leaseOwner: string;
  readonly attempt: DeliveryAttempt;
  readonly outcome: AttemptOutcome;
  /**
   * True when the attempt's record could not be stored: only its outcome is applied (the delivery advances by
   * the response, and the subscription's health with it), so no delivery waits for a record that always fails.
   */
  readonly withoutRecord?: boolean;
}

export interface ListDeliveriesQuery {
  readonly limit: number;
  readonly status?: DeliveryStatus;
  /** Only the delivery of this event (msg_...). */
  readonly eventId?: string;
  /** Only deliveries of events about this plant (its id in the event's payload). */
  readonly plantId?: bigint;
}

/** A recovery: re-queuing the failed deliveries of one subscription created in [since, until). */
export interface WebhookRecovery {
  readonly id: string;
  readonly subscriptionId: string;
  readonly since: Date;
  readonly until: Date;
  /** running: batches are being re-queued; done: every delivery of the window was looked at. */
  readonly status: 'running' | 'done';
  /** Failed deliveries made pending again so far. */
  readonly requeued: number;
  readonly createdAt: Date;
  /** When its last batch ran: a running recovery not updated for long was interrupted (a restart). */
  readonly updatedAt: Date;
  readonly finishedAt?: Date;
}

export interface NewWebhookRecovery {
  readonly id: string;
  readonly subscriptionId: string;
  /** Identifies the window as asked (since, and until or none): one recovery per window. */
  readonly windowKey: string;
  readonly since: Date;
  readonly until: Date;
  readonly now: Date;
}

export interface SigningKeys {
  readonly url: string;
  readonly secret: string;
  readonly previousSecret?: string;
}

export interface WebhookStore {
  insertSubscription(subscription: NewWebhookSubscription): Promise<void>;
  /** Oldest first. */
  listSubscriptions(): Promise<WebhookSubscription[]>;
  getSubscription(id: string): Promise<WebhookSubscription | undefined>;
  /**
   * Makes `secret` the subscription's signing secret. The one it replaces stays valid
   * (deliveries are signed with both) until `previousSecretExpiresAt`, replacing any
   * older previous secret; undefined drops it at once. False when there is no such
   * subscription.
   */
  rotateSecret(id: string, secret: string, previousSecretExpiresAt: Date | undefined): Promise<boolean>;
  /**
   * Applies `change` if the subscription is at a version `expected` accepts (any when undefined), under a lock, so
   * of concurrent writers expecting one version exactly one succeeds. The version goes up only when something
   * changed. Deliveries already pending keep their event and go to the new URL.
   */
  updateSubscription(
    id: string,
    change: SubscriptionChange,
    expected: ExpectedSubscriptionVersion | undefined,
    now: Date,
  ): Promise<UpdateSubscriptionOutcome>;
  /**
   * The recovery of this window: a new one (created true), or the one already asked for the same window.
   * Undefined when the subscription does not exist.
   */
  startRecovery(
    recovery: NewWebhookRecovery,
  ): Promise<{ readonly recovery: WebhookRecovery; readonly created: boolean } | undefined>;
  getRecovery(subscriptionId: string, id: string): Promise<WebhookRecovery | undefined>;
  /** The running recoveries last advanced before `before`: interrupted (a stopped instance, a failed batch). */
  staleRecoveries(before: Date): Promise<string[]>;
  /**
   * One batch of a running recovery, in one transaction: the next `limit` deliveries of its window after its
   * cursor, the failed ones made pending (one more attempt, due at `now`); done when fewer were left.
   * Undefined when the recovery is gone (its subscription was deleted).
   */
  recoverBatch(id: string, now: Date, limit: number): Promise<WebhookRecovery | undefined>;
  /**
   * What signs a message to the subscription now: its URL and secret, and the previous secret while its overlap
   * lasts at `now`. Undefined when there is no such subscription.
   */
  signingKeys(id: string, now: Date): Promise<SigningKeys | undefined>;
  /** Deletes the subscription with its deliveries and their log; false when there was none. */
  deleteSubscription(id: string): Promise<boolean>;
  /** A subscription's deliveries, newest first, each with its attempts. */
  listDeliveries(subscriptionId: string, query: ListDeliveriesQuery): Promise<WebhookDelivery[]>;
  getDelivery(subscriptionId: string, deliveryId: string): Promise<WebhookDelivery | undefined>;
  /**
   * Whether any pending delivery is due and not leased: a read, so a dispatcher
   * with nothing to do never takes a write lock or a writer's turn to find out.
   */
  hasDueDeliveries(now: Date): Promise<boolean>;
  /** Deliveries still pending (first attempts and retries alike), and how long the oldest has waited. */
  backlog(now?: Date): Promise<WebhookBacklog>;
  /**
   * Leases up to `limit` pending deliveries that are due and not leased, so no other
   * dispatcher (in this process or another) takes them while the lease lasts. Fair: each subscription's
   * oldest due go first (round-robin), at most `perSubscription` in flight each, and a throttled subscription
   * gets no more than its rate allows (counted on its row in the same transaction, so across instances).
   */
  claimDueDeliveries(request: ClaimRequest): Promise<ClaimedDelivery[]>;
  /**
   * Logs the attempt; applies its outcome only if `leaseOwner` still holds the lease. Also keeps the
   * subscription's health: a failed attempt marks when it started failing (if not yet), a success clears it.
   */
  recordAttempt(result: AttemptResult): Promise<void>;
  /**
   * Disables the subscription if it is enabled and has been failing since `failingSince` or earlier, recording
   * `now` and `reason`. Atomic: of instances asking at once exactly one gets the subscription back, the others
   * undefined (as when it is healthy, already disabled or gone).
   */
  disableFailingSubscription(
    id: string,
    failingSince: Date,
    now: Date,
    reason: string,
  ): Promise<WebhookSubscription | undefined>;
  /**
   * Makes a delivery due at `now` for one more attempt (a manual retry); a delivery
   * being attempted right now keeps its lease. Undefined when it does not exist.
   */
  retryDelivery(subscriptionId: string, deliveryId: string, now: Date): Promise<WebhookDelivery | undefined>;
  /**
   * Retention: deletes up to `limit` finished events (no delivery pending) created before `before`, oldest
   * first, with their deliveries and attempts, in one transaction; nothing still to be sent is lost. Returns
   * how many: fewer than `limit` means none is left (or another instance is deleting the rest).
   */
  pruneFinishedEvents(before: Date, limit: number): Promise<number>;
}

export interface WebhookBacklog {
  readonly pending: number;
  /** Age of the oldest pending delivery; null when none is pending. */
  readonly oldestPendingSeconds: number | null;
}
