/**
 * Deletes finished webhook events older than WEBHOOK_RETENTION_DAYS, so the outbox does not
 * grow without bound; one with a pending delivery is never deleted. Chunks, each its own short
 * transaction, so a large backlog never holds the write lock for long; stop() waits only for
 * the chunk in flight, so a backlog does not hold up a shutdown.
 */
import type { WebhookStore } from '../store/types.js';

export interface RetentionLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export interface RetentionOptions {
  /** Events older than this many days are deleted; 0 keeps them forever (the job never runs). */
  readonly retentionDays: number;
  readonly log: RetentionLogger;
  /** Time between runs (default an hour). */
  readonly intervalMs?: number;
  /** Time from start() to the first run (default 10 s: out of the way of start-up). */
  readonly firstRunDelayMs?: number;
  /** Events deleted per store call (default 200). */
  readonly chunkSize?: number;
  /** The clock the age of events is measured with. */
  readonly now?: () => Date;
}

const DAY_MS = 86_400_000;
export const RETENTION_INTERVAL_MS = 3_600_000;
const FIRST_RUN_DELAY_MS = 10_000;
// On SQLite a chunk holds the writer thread, and plant writes wait behind it: small
// chunks keep that wait short (bench/README.md, "Figures behind code comments").
const CHUNK_SIZE = 200;

export class WebhookRetentionJob {
  private timer: NodeJS.Timeout | undefined;
  private run: Promise<number> | undefined;
  private stopping = false;

  constructor(
    private readonly store: Pick<WebhookStore, 'pruneFinishedEvents'>,
    private readonly options: RetentionOptions,
  ) {}

  /** Whether a run is scheduled or under way (false with 0 days, and after stop()). */
  get active(): boolean {
    return this.timer !== undefined || this.run !== undefined;
  }

  start(): void {
    if (this.options.retentionDays === 0 || this.stopping || this.active) return;
    this.schedule(this.options.firstRunDelayMs ?? FIRST_RUN_DELAY_MS);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.run;
  }

  /** Resolves to how many it deleted; never rejects (a failure is logged, the next run tries again). */
  async pruneNow(): Promise<number> {
    const chunkSize = this.options.chunkSize ?? CHUNK_SIZE;
    const before = new Date((this.options.now?.() ?? new Date()).getTime() - this.options.retentionDays * DAY_MS);
    let pruned = 0;
    try {
      for (;;) {
        const deleted = await this.store.pruneFinishedEvents(before, chunkSize);
        pruned += deleted;
        if (deleted < chunkSize || this.stopping) break;
      }
    } catch (error) {
      this.options.log.warn(
        { err: error, pruned, before },
        'webhooks: could not delete old events from the delivery log; will try again at the next run',
      );
      return pruned;
    }
    if (pruned > 0)
      this.options.log.info(
        { pruned, before },
        `webhooks: deleted ${pruned} finished events older than ${this.options.retentionDays} days, with their deliveries`,
      );
    return pruned;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.run = this.pruneNow().finally(() => {
        this.run = undefined;
        if (!this.stopping) this.schedule(this.options.intervalMs ?? RETENTION_INTERVAL_MS);
      });
    }, delayMs);
    this.timer.unref();
  }
}
