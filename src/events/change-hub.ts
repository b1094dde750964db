/**
 * One per instance: follows the change log and hands every new batch of changes to
 * the open streams. It reads the log when the store signals a commit (on
 * PostgreSQL, a commit on any instance) and, as a safety net for a missed signal,
 * once a second; reads never overlap, come at most every READ_EVERY_MS, and signals
 * that come during a read make one more read after it. Streams thus cost the store
 * one read per batch of commits, however many streams there are.
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
   * The history the store reported to a stream that opens. It changes under a running
   * hub only when a copy replaces a PostgreSQL store's contents while instances serve
   * it. Its log goes on unbroken (the copy's deletions and creations are in it), so the
   * streams open then go on; ids from then on name the new history, and a client
   * resuming with an earlier one is told to read afresh, as it should after a copy.
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

  /**
   * Reads now, or, when the last read began less than READ_EVERY_MS ago, then: commits
   * that come in a stream (a thousand creates a second) are handed on in batches, one
   * write per stream per batch rather than per commit.
   */
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
