/**
 * One per instance: follows the change log and hands each new batch to every open stream,
 * so streams cost the store one read per batch of commits, however many there are. Reads
 * never overlap; a once-a-second read covers a missed commit signal.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { ChangeLog } from '../store/types.js';
import { ChangeBatch } from './change-batch.js';
import type { ChangeStream } from './change-stream.js';

const PAGE = 1000;
const SAFETY_POLL_MS = 1000;
/** The most often the log is read: the longest a change waits for its batch (bench/README.md, "Streams"). */
export const READ_EVERY_MS = 10;

export class ChangeHub {
  private readonly streams = new Set<ChangeStream>();
  private reading = false;
  private readAgain = false;
  private stopWatching: (() => void) | undefined;
  private poll: NodeJS.Timeout | undefined;
  private scheduled: NodeJS.Timeout | undefined;
  private lastRead = 0;

  private constructor(
    private readonly log: ChangeLog,
    /** The last position handed to the streams. */
    private cursor: bigint,
    /** The change log's history, for the event ids. */
    private current: string,
    private readonly logger: FastifyBaseLogger,
  ) {}

  /** Starts at the log's current end: streams that join get what commits from now on, or catch up to here first. */
  static async start(log: ChangeLog, logger: FastifyBaseLogger): Promise<ChangeHub> {
    const bounds = await log.bounds();
    const hub = new ChangeHub(log, bounds.last, bounds.history, logger);
    hub.stopWatching = log.watch(() => hub.wake());
    hub.poll = setInterval(() => hub.wake(), SAFETY_POLL_MS);
    hub.poll.unref();
    return hub;
  }

  get position(): bigint {
    return this.cursor;
  }

  get history(): string {
    return this.current;
  }

  /**
   * Changes under a running hub only when a copy replaces a PostgreSQL store's contents; the
   * log goes on unbroken, so open streams go on, and a resume with the old history reads afresh.
   */
  noteHistory(history: string): void {
    this.current = history;
  }

  get size(): number {
    return this.streams.size;
  }

  add(stream: ChangeStream): void {
    this.streams.add(stream);
  }

  remove(stream: ChangeStream): void {
    this.streams.delete(stream);
  }

  all(): ChangeStream[] {
    return [...this.streams];
  }

  stop(): void {
    this.stopWatching?.();
    clearInterval(this.poll);
    clearTimeout(this.scheduled);
  }

  /** At most every READ_EVERY_MS, so a stream of commits costs one write per stream per batch, not per commit. */
  private wake(): void {
    if (this.reading) {
      this.readAgain = true;
      return;
    }
    if (this.scheduled !== undefined) return;
    const wait = this.lastRead + READ_EVERY_MS - performance.now();
    if (wait <= 0) {
      void this.read();
      return;
    }
    this.scheduled = setTimeout(() => {
      this.scheduled = undefined;
      void this.read();
    }, wait);
  }

  private async read(): Promise<void> {
    this.reading = true;
    this.readAgain = false;
    this.lastRead = performance.now();
    try {
      for (;;) {
        const entries = await this.log.after(this.cursor, PAGE);
        if (entries.length === 0) break;
        this.cursor = (entries.at(-1) as (typeof entries)[number]).position;
        const batch = new ChangeBatch(entries, this.current);
        for (const stream of this.streams) stream.deliver(batch);
        if (entries.length < PAGE) break;
      }
    } catch (error) {
      // The store is down: the streams wait, and the next signal or poll tries again.
      this.logger.warn({ err: error }, 'change stream: reading the change log failed');
    } finally {
      this.reading = false;
      if (this.readAgain) this.wake();
    }
  }
}
