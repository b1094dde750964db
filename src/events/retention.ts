/**
 * Keeps the change log to EVENTS_RETENTION_HOURS, deleting a bounded number per statement so
 * no delete holds the store for long. Every instance runs it: deleting twice deletes nothing.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { ChangeLog } from '../store/types.js';

const EVERY_MS = 60_000;
const PER_STATEMENT = 10_000;

export class ChangeLogRetention {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly log: ChangeLog,
    private readonly retentionHours: number,
    private readonly logger: FastifyBaseLogger,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.running ??= this.prune().then(() => {
        this.running = undefined;
      });
    }, EVERY_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** Deletes every entry older than the retention; resolves with how many. */
  async prune(now = Date.now()): Promise<number> {
    const before = new Date(now - this.retentionHours * 3_600_000);
    let total = 0;
    try {
      for (let deleted = PER_STATEMENT; deleted === PER_STATEMENT; total += deleted)
        deleted = await this.log.prune(before, PER_STATEMENT);
    } catch (error) {
      this.logger.warn({ err: error }, 'change log retention: pruning failed; it is tried again in a minute');
    }
    return total;
  }
}
