/**
 * One open GET /events. Every position is written or filtered out exactly once, in order,
 * so a stream neither misses nor repeats a change.
 *
 * A reader that falls more than maxBacklogBytes behind leaves the hub's live batches and
 * reads the log at its own pace, so the server holds a bounded amount for it and a slow
 * reader is never cut off; only one that takes nothing for stallMs is (stream.overflow).
 */
import { Readable } from 'node:stream';
import { isPlantEventType, type EventType } from '../domain/events.js';
import type { ChangeLog, PlantChangeEntry } from '../store/types.js';
import { ChangeBatch } from './change-batch.js';
import { closingMessage, comment, positionMessage } from './sse.js';

export interface StreamFilter {
  /** Only these types; when undefined, every plant event (operational events only when named). */
  readonly types?: ReadonlySet<EventType>;
  /**
   * Only changes of plants with this tag, or that had it: a change that takes a plant out of
   * the tag passes too (for a deletion, the plant's last tag). Operational events are not about a plant: not filtered.
   */
  readonly tag?: string;
}

export interface StreamSource {
  readonly log: ChangeLog;
  /** Where catching up ends and the live batches take over. */
  readonly livePosition: () => bigint;
  /** The change log's history, for the event ids. */
  readonly history: string;
}

export interface StreamLimits {
  /** Bytes that may wait for the reader before the stream stops taking live batches (and reads the log at its pace). */
  readonly maxBacklogBytes: number;
  /** How long the reader may take nothing of what waits for it before the stream is cut off. */
  readonly stallMs: number;
}

/** Entries read from the log per query while catching up. */
const CATCH_UP_PAGE = 1000;

/** A wait for the reader to take what waits for it, down to `limit` bytes. */
interface Wait {
  readonly limit: number;
  readonly resolve: (taken: boolean) => void;
  /** What waited when the stall timer was last set: less when it fires means the reader is taking. */
  waiting: number;
  timer: NodeJS.Timeout;
}

export class ChangeStream {
  readonly body: Readable;
  /** The last position written or skipped. */
  private position: bigint;
  /** The last position the client was told of (an event, or an id-only message). */
  private told: bigint;
  /** False while catching up from the log. */
  private live = false;
  private ended = false;
  private wait: Wait | undefined;

  constructor(
    private readonly source: StreamSource,
    /** Bytes the response holds beyond `body` (written to it, not yet to the socket). */
    private readonly responsePending: () => number,
    private readonly filter: StreamFilter,
    after: bigint,
    private readonly limits: StreamLimits,
    private readonly onEnd: () => void,
  ) {
    this.position = after;
    this.told = after;
    // Asked for more: the reader took some of what waited (the response's 'drain' tells the same: taken()).
    this.body = new Readable({ read: () => this.taken() });
  }

  get isEnded(): boolean {
    return this.ended;
  }

  get pending(): number {
    return this.body.readableLength + this.responsePending();
  }

  /** Rejects when the log cannot be read: the stream should then end (the client resumes). */
  async start(): Promise<void> {
    await this.catchUp();
  }

  deliver(batch: ChangeBatch): void {
    // While catching up, the log has this batch and the catching up reads it.
    if (this.ended || !this.live) return;
    if (this.pending > this.limits.maxBacklogBytes) {
      this.fallBehind();
      return;
    }
    this.write(batch);
  }

  /** Also tells the position past what a filter left out, so a resume skips it. */
  heartbeat(): void {
    if (this.ended) return;
    let text = comment('heartbeat');
    if (this.position > this.told) {
      text += positionMessage(this.source.history, this.position);
      this.told = this.position;
    }
    this.body.push(text);
    // A reader that stopped while nothing changes: what waits for it grows by the heartbeats alone.
    if (this.live && this.pending > this.limits.maxBacklogBytes) this.fallBehind();
  }

  close(reason: 'shutdown' | 'unauthorized', detail: string): void {
    if (this.ended) return;
    this.body.push(closingMessage(reason, this.source.history, this.position, detail));
    this.end();
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    const wait = this.wait;
    this.wait = undefined;
    if (wait !== undefined) {
      clearTimeout(wait.timer);
      wait.resolve(false);
    }
    this.body.push(null);
    this.onEnd();
  }

  /** The body was read, or the response drained. */
  taken(): void {
    const wait = this.wait;
    if (wait === undefined || this.pending > wait.limit) return;
    this.wait = undefined;
    clearTimeout(wait.timer);
    wait.resolve(true);
  }

  private fallBehind(): void {
    this.live = false;
    this.catchUp().catch(() => this.end());
  }

  /**
   * Each page once the reader has room for it. Reaching the hub's position and going live
   * happen between two of the hub's deliveries, so the next batch follows on from what was written.
   */
  private async catchUp(): Promise<void> {
    for (;;) {
      if (!(await this.room(this.limits.maxBacklogBytes / 2))) return;
      if (this.position >= this.source.livePosition()) break;
      const entries = await this.source.log.after(this.position, CATCH_UP_PAGE);
      if (entries.length === 0) break;
      this.write(new ChangeBatch(entries, this.source.history));
    }
    if (!this.ended) this.live = true;
  }

  /** True once at most `limit` bytes wait; false when the stream ended or the reader stalled. */
  private room(limit: number): Promise<boolean> {
    if (this.ended) return Promise.resolve(false);
    if (this.pending <= limit) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.stalled(), this.limits.stallMs);
      this.wait = { limit, resolve, waiting: this.pending, timer };
    });
  }

  /** Only a reader that took nothing since the timer was set is cut off. */
  private stalled(): void {
    const wait = this.wait;
    if (wait === undefined) return;
    if (this.pending < wait.waiting) {
      wait.waiting = this.pending;
      wait.timer = setTimeout(() => this.stalled(), this.limits.stallMs);
      return;
    }
    const detail = `the client read nothing for ${this.limits.stallMs} ms while ${this.pending} bytes waited for it; resume from lastEventId`;
    this.body.push(closingMessage('overflow', this.source.history, this.told, detail));
    this.end();
  }

  private write(batch: ChangeBatch): void {
    if (this.ended || batch.last <= this.position) return;
    const unfiltered = this.filter.types === undefined && this.filter.tag === undefined && !batch.operational;
    if (unfiltered && batch.first === this.position + 1n) {
      // The common case: every change, and this batch follows on from the last.
      this.body.push(batch.bytes);
      this.position = batch.last;
      this.told = batch.last;
      return;
    }
    let text = '';
    batch.entries.forEach((entry, i) => {
      if (entry.position <= this.position) return;
      this.position = entry.position;
      if (!this.matches(entry)) return;
      text += batch.messages[i] as string;
      this.told = entry.position;
    });
    if (text.length > 0) this.body.push(text);
  }

  private matches(entry: PlantChangeEntry): boolean {
    const plant = isPlantEventType(entry.type);
    // Without `types`, plant events only; an operational event is about no plant, so no tag filters it out.
    if (this.filter.types === undefined ? !plant : !this.filter.types.has(entry.type)) return false;
    if (!plant) return true;
    const tag = this.filter.tag;
    return tag === undefined || entry.tag === tag || (entry.previousTag !== undefined && entry.previousTag === tag);
  }
}
