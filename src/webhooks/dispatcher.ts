/**
 * Sends due deliveries from the outbox in the background, never on a request's path, at most
 * `concurrency` at once. At-least-once: a crash between the subscriber's 2xx and its record
 * sends the event again once the lease expires; subscribers deduplicate on webhook-id.
 * stop() releases the deliveries in flight (due again at once) before the store closes.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type {
  AttemptOutcome,
  AttemptResult,
  ClaimedDelivery,
  WebhookStore,
  WebhookSubscription,
} from '../store/types.js';
import { nextAttemptDelay } from './retry-schedule.js';
import { sendWebhook, type SendResult } from './sender.js';
import { webhookHeaders } from './signing.js';
import type { UrlPolicy } from './url-policy.js';

export interface DispatcherLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export interface DispatcherOptions {
  /**
   * Set in a worker of a multi-worker instance that does not deliver (src/cluster): it never looks at the outbox
   * itself; a nudge goes to the worker that delivers, so each delivery is sent once per instance.
   */
  readonly elsewhere?: () => void;
  /** Most deliveries in flight at once, in this process. */
  readonly concurrency: number;
  /** How often the outbox is polled for due deliveries (retries, other instances' events). */
  readonly pollIntervalMs: number;
  /** How long a subscriber has to answer an attempt. */
  readonly timeoutMs: number;
  /** Delays before each retry, in ms (see retry-schedule.ts). */
  readonly retrySchedule: readonly number[];
  readonly urlPolicy: UrlPolicy;
  readonly log: DispatcherLogger;
  /** A subscription whose attempts have all failed for this long is disabled; 0 never disables one. */
  readonly disableAfterMs?: number;
  /** Told of each subscription this dispatcher disabled (exactly one instance is, per disable). */
  readonly onDisabled?: (subscription: WebhookSubscription) => void;
  /** Told of each attempt whose record the store refused (its delivery is then finished without it). */
  readonly onAttemptNotRecorded?: () => void;
  /** The time deliveries are due and attempts are stamped by (tests simulate days with it). */
  readonly now?: () => Date;
}

/** "5d", "36h", "90m": a duration as its largest whole unit. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const)
    if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

/** The shortest time between two looks at the outbox for a nudge (a write that may have made deliveries). */
const MIN_TICK_GAP_MS = 20;

/**
 * The shortest time between two looks once a delivery has ended and its slot is free: shorter, so a backlog drains
 * at the pace of the receivers rather than WEBHOOK_CONCURRENCY deliveries per MIN_TICK_GAP_MS (bench/README.md,
 * "Webhooks").
 */
const AFTER_DELIVERY_GAP_MS = 5;

/**
 * When deliveries are due but a claim got none (a throttled subscription waiting out its second, or every due one
 * belonging to subscriptions at their in-flight share), the outbox is looked at again this soon, not a poll later.
 */
const HELD_BACK_RECHECK_MS = 100;

/**
 * Most deliveries of one subscription in flight at once in this process while another has deliveries due: half
 * the concurrency, so a slow receiver's backlog always leaves half the slots to the others (the claim applies it).
 */
export function perSubscriptionShare(concurrency: number): number {
  return Math.max(1, Math.ceil(concurrency / 2));
}

/** The attempt's timeout plus room to record it: a dispatcher that dies holds its deliveries this long. */
export function leaseDurationMs(timeoutMs: number): number {
  return timeoutMs + 15_000;
}

export class WebhookDispatcher {
  private readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly inFlight = new Map<
    string,
    { controller: AbortController; done: Promise<void>; subscriptionId: string }
  >();
  private timer: NodeJS.Timeout | undefined;
  private tick: Promise<void> | undefined;
  private deferredTick: NodeJS.Timeout | undefined;
  /** When the deferred look is due. */
  private deferredUntil = 0;
  private recheck: NodeJS.Timeout | undefined;
  private lastTickAt = 0;
  /** A look was wished for during the current one: the gap the most eager wish asked for. */
  private againGapMs: number | undefined;
  private stopping = false;
  private claims = 0;
  private readonly now: () => Date;

  constructor(
    private readonly store: WebhookStore,
    private readonly options: DispatcherOptions,
  ) {
    this.now = options.now ?? (() => new Date());
  }

  start(): void {
    if (this.options.elsewhere !== undefined) return;
    if (this.timer !== undefined || this.stopping) return;
    this.timer = setInterval(() => this.nudge(), this.options.pollIntervalMs);
    this.timer.unref();
    this.nudge();
  }

  /** Looks at least MIN_TICK_GAP_MS apart, so a burst of creates costs a few outbox queries, not one each. */
  nudge(): void {
    if (this.options.elsewhere !== undefined) return this.options.elsewhere();
    this.lookAfter(MIN_TICK_GAP_MS);
  }

  /** Looks at the outbox once `gapMs` have passed since the last look; a wish for a look is never lost. */
  private lookAfter(gapMs: number): void {
    if (this.stopping || this.timer === undefined) return;
    if (this.tick !== undefined) {
      // Looked for again when this look ends, as soon as the most eager wish meanwhile asked.
      this.againGapMs = Math.min(this.againGapMs ?? gapMs, gapMs);
      return;
    }
    const at = this.lastTickAt + gapMs;
    if (this.deferredTick !== undefined) {
      if (this.deferredUntil <= at) return;
      clearTimeout(this.deferredTick);
    }
    const wait = at - Date.now();
    if (wait > 0) {
      this.deferredUntil = at;
      this.deferredTick = setTimeout(() => {
        this.deferredTick = undefined;
        this.lookAfter(gapMs);
      }, wait);
      return;
    }
    this.deferredTick = undefined;
    this.lastTickAt = Date.now();
    this.tick = this.claimWhileFree().finally(() => {
      this.tick = undefined;
      const again = this.againGapMs;
      this.againGapMs = undefined;
      if (again !== undefined) this.lookAfter(again);
    });
  }

  /** Resolves once no look at the outbox and no attempt (with its aftermath) is under way. */
  async idle(): Promise<void> {
    while (this.tick !== undefined || this.inFlight.size > 0) {
      await this.tick;
      await Promise.all([...this.inFlight.values()].map((entry) => entry.done));
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    clearTimeout(this.deferredTick);
    clearTimeout(this.recheck);
    await this.tick;
    for (const { controller } of this.inFlight.values()) controller.abort();
    await Promise.all([...this.inFlight.values()].map((entry) => entry.done));
  }

  private async claimWhileFree(): Promise<void> {
    try {
      // A read first: when nothing is due (the usual case) no write is made at all.
      if (this.options.concurrency - this.inFlight.size <= 0 || !(await this.store.hasDueDeliveries(this.now())))
        return;
      for (;;) {
        const free = this.options.concurrency - this.inFlight.size;
        if (free <= 0 || this.stopping) return;
        const claimed = await this.store.claimDueDeliveries({
          now: this.now(),
          limit: free,
          leaseMs: leaseDurationMs(this.options.timeoutMs),
          owner: `${this.owner}:${(this.claims += 1)}`,
          perSubscription: perSubscriptionShare(this.options.concurrency),
          inFlight: this.inFlightBySubscription(),
        });
        for (const delivery of claimed) this.launch(delivery);
        if (claimed.length === 0) this.recheckSoon();
        // Only a full batch suggests more are due.
        if (claimed.length < free) return;
      }
    } catch (error) {
      this.options.log.warn({ err: error }, 'webhooks: could not read the outbox; will retry');
    }
  }

  private inFlightBySubscription(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const { subscriptionId } of this.inFlight.values())
      counts.set(subscriptionId, (counts.get(subscriptionId) ?? 0) + 1);
    return counts;
  }

  private recheckSoon(): void {
    if (this.recheck !== undefined || this.stopping) return;
    this.recheck = setTimeout(() => {
      this.recheck = undefined;
      this.nudge();
    }, HELD_BACK_RECHECK_MS);
    this.recheck.unref();
  }

  private launch(delivery: ClaimedDelivery): void {
    const controller = new AbortController();
    const done = this.deliver(delivery, controller.signal)
      // deliver() handles what it expects; anything else is a bug, logged rather than left to crash the process.
      .catch((error: unknown) =>
        this.options.log.warn({ err: error, deliveryId: delivery.deliveryId }, 'webhooks: unexpected delivery failure'),
      )
      .finally(() => {
        this.inFlight.delete(delivery.deliveryId);
        this.lookAfter(AFTER_DELIVERY_GAP_MS);
      });
    this.inFlight.set(delivery.deliveryId, { controller, done, subscriptionId: delivery.subscriptionId });
  }

  private async deliver(delivery: ClaimedDelivery, signal: AbortSignal): Promise<void> {
    const attemptedAt = this.now();
    let headers: Record<string, string>;
    try {
      headers = webhookHeaders(delivery, attemptedAt);
    } catch (error) {
      // Only a secret edited by hand in the database can get here; it must not crash the process.
      await this.record(delivery, attemptedAt, {
        latencyMs: 0,
        error: `cannot sign: ${(error as Error).message}`,
        interrupted: false,
      });
      return;
    }
    const result = await sendWebhook({
      url: delivery.url,
      headers,
      body: delivery.payload,
      timeoutMs: this.options.timeoutMs,
      policy: this.options.urlPolicy,
      signal,
    });
    await this.record(delivery, attemptedAt, result);
  }

  private async record(delivery: ClaimedDelivery, attemptedAt: Date, result: SendResult): Promise<void> {
    const outcome = this.outcomeOf(delivery, result);
    this.logAttempt(delivery, result, outcome);
    const attempt: AttemptResult = {
      deliveryId: delivery.deliveryId,
      leaseOwner: delivery.leaseOwner,
      attempt: {
        attempt: delivery.attempt,
        attemptedAt,
        latencyMs: result.latencyMs,
        ...(result.status === undefined ? {} : { responseStatus: result.status }),
        ...(result.error === undefined ? {} : { error: result.error }),
        ...(result.responseBody === undefined ? {} : { responseBody: result.responseBody }),
        ...(result.responseContentType === undefined ? {} : { responseContentType: result.responseContentType }),
      },
      outcome,
    };
    try {
      await this.store.recordAttempt(attempt);
    } catch (error) {
      if (!(await this.finishUnrecorded(attempt, error))) return;
    }
    if (outcome.kind === 'retry' || outcome.kind === 'failed') await this.disableIfFailing(delivery.subscriptionId);
  }

  /**
   * An attempt whose record the store refused: its delivery still advances by the response (an attempt that can
   * never be recorded would otherwise be sent again every lease, forever). False when even that failed (the
   * database is unreachable): the lease then expires and the delivery is attempted again, at-least-once.
   */
  private async finishUnrecorded(attempt: AttemptResult, error: unknown): Promise<boolean> {
    this.options.onAttemptNotRecorded?.();
    const fields = { deliveryId: attempt.deliveryId, attempt: attempt.attempt.attempt, outcome: attempt.outcome.kind };
    this.options.log.warn(
      { ...fields, err: error },
      'webhooks: could not record a delivery attempt; its delivery is finished by the response without the record',
    );
    try {
      await this.store.recordAttempt({ ...attempt, withoutRecord: true });
      return true;
    } catch (again) {
      this.options.log.warn(
        { ...fields, err: again },
        'webhooks: could not finish a delivery; it is attempted again once its lease expires',
      );
      return false;
    }
  }

  /** After a failed attempt: a subscription failing for WEBHOOK_DISABLE_AFTER is disabled, once in the cluster. */
  private async disableIfFailing(subscriptionId: string): Promise<void> {
    const after = this.options.disableAfterMs ?? 0;
    if (after <= 0) return;
    const now = this.now();
    const reason = `every delivery attempt failed for ${formatDuration(after)} (WEBHOOK_DISABLE_AFTER)`;
    try {
      const disabled = await this.store.disableFailingSubscription(
        subscriptionId,
        new Date(now.getTime() - after),
        now,
        reason,
      );
      if (disabled === undefined) return;
      this.options.log.warn(
        { subscriptionId, url: disabled.url, reason },
        'webhooks: subscription disabled; its events are kept: enable it (PATCH enabled: true) to send them',
      );
      this.options.onDisabled?.(disabled);
      // Its webhook.disabled event may have deliveries to other subscriptions, due now.
      this.nudge();
    } catch (error) {
      // Tried again at the next failed attempt.
      this.options.log.warn({ err: error, subscriptionId }, 'webhooks: could not disable a failing subscription');
    }
  }

  private outcomeOf(delivery: ClaimedDelivery, result: SendResult): AttemptOutcome {
    if (result.error === undefined) return { kind: 'succeeded' };
    if (result.interrupted) return { kind: 'released', nextAttemptAt: this.now() };
    // A retry asked for by hand is one attempt; the automatic schedule is spent.
    const delay = delivery.manual ? undefined : nextAttemptDelay(this.options.retrySchedule, delivery.attempt);
    return delay === undefined
      ? { kind: 'failed' }
      : { kind: 'retry', nextAttemptAt: new Date(this.now().getTime() + delay) };
  }

  private logAttempt(delivery: ClaimedDelivery, result: SendResult, outcome: AttemptOutcome): void {
    if (outcome.kind === 'succeeded') return;
    const fields = {
      deliveryId: delivery.deliveryId,
      subscriptionId: delivery.subscriptionId,
      eventId: delivery.eventId,
      attempt: delivery.attempt,
      status: result.status,
      error: result.error,
    };
    if (outcome.kind === 'failed')
      this.options.log.warn(fields, 'webhooks: delivery failed; no attempts left (retry it by hand)');
    else if (outcome.kind === 'retry')
      this.options.log.info(
        { ...fields, nextAttemptAt: outcome.nextAttemptAt },
        'webhooks: delivery attempt failed; will retry',
      );
  }
}
