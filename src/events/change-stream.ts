/**
 * One open GET /events: the changes after its position, filtered, written as SSE
 * messages. It first catches up from the change log (when it resumes from a past
 * position), then takes the hub's live batches; both come in position order and
 * every position is either written or skipped by the filter exactly once, so a
 * stream neither misses nor repeats a change.
 *
 * A reader that does not keep up is not buffered without bound: once more than
 * maxBacklogBytes wait to be written, the stream ends with a stream.overflow event
 * naming the last id it was sent, to resume from.
 */
import type { Readable } from 'node:stream';
import type { EventType } from '../domain/events.js';
import type { ChangeLog, PlantChangeEntry } from '../store/types.js';
import { ChangeBatch } from './change-batch.js';
import { closingMessage, comment, positionMessage } from './sse.js';

export interface StreamFilter {
  /** Only these types; all when undefined. */
  readonly types?: ReadonlySet<EventType>;
  /** Only changes of plants with this tag (a deleted plant's last tag). */
  readonly tag?: string;
}

/** Entries read from the log per query while catching up. */
const CATCH_UP_PAGE = 1000;

export class ChangeStream {
  /** The last position written or skipped. */
  private position: bigint;
  /** The last position the client was told of (an event, or an id-only message). */
  private told: bigint;
  /** Live batches that arrived while catching up, delivered after it. */
  private held: ChangeBatch[] | undefined = [];
  private ended = false;

  constructor(
    /** The response body: what is pushed here is written to the socket as the reader takes it. */
    private readonly out: Readable,
    private readonly pending: () => number,
    private readonly filter: StreamFilter,
    after: bigint,
    private readonly maxBacklogBytes: number,
    private readonly onEnd: () => void,
  ) {
    this.position = after;
    this.told = after;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  /** Reads the log from this stream's position up to `upTo` (the hub's position when the stream joined), then goes live. */
  async catchUp(log: ChangeLog, upTo: bigint): Promise<void> {
    while (!this.ended && this.position < upTo) {
      const entries = (await log.after(this.position, CATCH_UP_PAGE)).filter((entry) => entry.position <= upTo);
      if (entries.length === 0) break;
      this.write(new ChangeBatch(entries));
    }
    const held = this.held ?? [];
    this.held = undefined;
    for (const batch of held) this.write(batch);
  }

  /** A live batch from the hub (consecutive positions, in order). */
  deliver(batch: ChangeBatch): void {
    if (this.held !== undefined) this.held.push(batch);
    else this.write(batch);
  }

  /** The heartbeat: a comment, and the position past what a filter left out. */
  heartbeat(): void {
    if (this.ended) return;
    let text = comment('heartbeat');
    if (this.position > this.told) {
      text += positionMessage(this.position);
      this.told = this.position;
    }
    this.send(text);
  }

  /** Ends the stream with its closing message: the server is shutting down, or the stream's token is no longer valid. */
  close(reason: 'shutdown' | 'unauthorized', detail: string): void {
    if (this.ended) return;
    this.send(closingMessage(reason, this.position, detail));
    this.end();
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.out.push(null);
    this.onEnd();
  }

  private write(batch: ChangeBatch): void {
    if (this.ended || batch.last <= this.position) return;
    let text: string | Buffer = '';
    let position = this.position;
    let told = this.told;
    if (this.filter.types === undefined && this.filter.tag === undefined && batch.first === position + 1n) {
      // The common case: every change, and this batch follows on from the last.
      text = batch.bytes;
      position = batch.last;
      told = batch.last;
    } else {
      batch.entries.forEach((entry, i) => {
        if (entry.position <= position) return;
        position = entry.position;
        if (!this.matches(entry)) return;
        text += batch.messages[i] as string;
        told = entry.position;
      });
    }
    // Moved on only once written: a stream cut off here names the last id it did send.
    if (text.length > 0 && !this.send(text)) return;
    this.position = position;
    this.told = told;
  }

  /** Writes, unless too much waits for the reader already: then the stream ends, saying so. */
  private send(text: string | Buffer): boolean {
    if (this.pending() > this.maxBacklogBytes) {
      const detail = `the client read too slowly: more than ${this.maxBacklogBytes} bytes were waiting; resume from lastEventId`;
      this.out.push(closingMessage('overflow', this.told, detail));
      this.end();
      return false;
    }
    this.out.push(text);
    return true;
  }

  private matches(entry: PlantChangeEntry): boolean {
    if (this.filter.types !== undefined && !this.filter.types.has(entry.type)) return false;
    return this.filter.tag === undefined || this.filter.tag === entry.tag;
  }
}
