/**
 * Recoveries run in the background, one batch (one short transaction) at a time, yielding between batches so
 * a large window never holds the event loop or the database for long. Progress is in the store, so any
 * instance answers it. A recovery interrupted (its instance stopped, a batch failed) is continued by the next request
 * for its window, and by every instance's sweep (`resumeInterrupted`, at start and every RECOVERY_STALE_MS): two
 * instances continuing one recovery take its batches in turn, each under the recovery's lock.
 */
import { randomBytes } from 'node:crypto';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { WebhookRecovery, WebhookStore } from '../store/types.js';
import type { DispatcherLogger } from './dispatcher.js';

/** Deliveries looked at per batch. */
export const RECOVERY_BATCH = 500;
/** A running recovery not advanced for this long was interrupted: asking for its window again, or the sweep, continues
 * it. */
export const RECOVERY_STALE_MS = 30_000;

export class RecoveryWindowError extends Error {}

export interface RecoveryWindow {
  readonly since: Date;
  readonly until: Date;
  readonly windowKey: string;
}

const RFC_3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

function rfc3339(name: string, text: string): Date {
  const date = new Date(text);
  if (!RFC_3339.test(text) || Number.isNaN(date.getTime()))
    throw new RecoveryWindowError(
      `${name} must be an RFC 3339 date-time, e.g. 2026-01-01T00:00:00Z (got '${text.slice(0, 64)}')`,
    );
  return date;
}

/** The window asked for, checked: since before until, until not after now, since within retention. */
export function recoveryWindow(
  since: string,
  until: string | undefined,
  now: Date,
  retentionDays: number,
): RecoveryWindow {
  const from = rfc3339('since', since);
  const to = until === undefined ? now : rfc3339('until', until);
  if (to.getTime() > now.getTime()) throw new RecoveryWindowError('until must not be in the future');
  if (from.getTime() >= to.getTime()) throw new RecoveryWindowError('since must be before until (or before now)');
  const oldest = now.getTime() - retentionDays * 86_400_000;
  if (retentionDays > 0 && from.getTime() < oldest)
    throw new RecoveryWindowError(
      `since must be within the last ${retentionDays} days (WEBHOOK_RETENTION_DAYS): older deliveries are deleted`,
    );
  // As asked: without until, asking again (later) answers the same recovery.
  return { since: from, until: to, windowKey: `${from.toISOString()}/${until === undefined ? '' : to.toISOString()}` };
}

export class WebhookRecoveries {
  private readonly running = new Map<string, Promise<void>>();
  private stopping = false;
  private sweep: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: WebhookStore,
    private readonly options: { readonly log: DispatcherLogger; readonly nudge: () => void; readonly batch?: number },
  ) {}

  /** The recovery of this window, started now, or the one already asked (continued if it was interrupted). */
  async start(subscriptionId: string, window: RecoveryWindow, now = new Date()): Promise<WebhookRecovery | undefined> {
    const started = await this.store.startRecovery({
      id: `rcv_${randomBytes(12).toString('hex')}`,
      subscriptionId,
      ...window,
      now,
    });
    if (started === undefined) return undefined;
    const { recovery, created } = started;
    const stale = now.getTime() - recovery.updatedAt.getTime() > RECOVERY_STALE_MS;
    if (recovery.status === 'running' && (created || stale)) this.run(recovery.id);
    return recovery;
  }

  /** Continues each running recovery not advanced for RECOVERY_STALE_MS, unless this instance runs it already. */
  async resumeInterrupted(now = new Date()): Promise<void> {
    try {
      const ids = await this.store.staleRecoveries(new Date(now.getTime() - RECOVERY_STALE_MS));
      for (const id of ids) this.run(id);
    } catch (error) {
      this.options.log.warn({ err: error }, 'webhooks: could not look for interrupted recoveries; trying again later');
    }
  }

  /** Sweeps for interrupted recoveries now and every RECOVERY_STALE_MS until stop(). */
  startSweeping(): void {
    if (this.sweep !== undefined || this.stopping) return;
    void this.resumeInterrupted();
    this.sweep = setInterval(() => void this.resumeInterrupted(), RECOVERY_STALE_MS);
    this.sweep.unref();
  }

  /** Resolves when every recovery this instance was running has finished (or stopped on an error). */
  async idle(): Promise<void> {
    await Promise.all(this.running.values());
  }

  /** Resolves when every recovery this instance runs has stopped (after its current batch). */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.sweep);
    await Promise.all(this.running.values());
  }

  private run(id: string): void {
    if (this.running.has(id) || this.stopping) return;
    const done = this.loop(id).finally(() => this.running.delete(id));
    this.running.set(id, done);
  }

  private async loop(id: string): Promise<void> {
    try {
      while (!this.stopping) {
        const recovery = await this.store.recoverBatch(id, new Date(), this.options.batch ?? RECOVERY_BATCH);
        if (recovery !== undefined && recovery.requeued > 0) this.options.nudge();
        if (recovery === undefined || recovery.status === 'done') {
          if (recovery !== undefined)
            this.options.log.info(
              { recoveryId: id, subscriptionId: recovery.subscriptionId, requeued: recovery.requeued },
              'webhooks: recovery done',
            );
          return;
        }
        await yieldToEventLoop();
      }
    } catch (error) {
      // Left running: the sweep (or asking for the same window again) continues it after RECOVERY_STALE_MS.
      this.options.log.warn({ err: error, recoveryId: id }, 'webhooks: a recovery stopped; it is continued later');
    }
  }
}
