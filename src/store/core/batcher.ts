/**
 * The one batching primitive of both stores (SQLite group commit; PostgreSQL create, change and read
 * batches). What queues during one turn of the event loop goes out together, at most `maxInFlight`
 * batches at a time; what queues meanwhile goes as soon as a batch finishes. The owner says what one
 * batch is (`take`) and how it goes (`send`): its SQL and its retry policy stay its own.
 */
import { StoreUnavailableError } from '../errors.js';

/** How well one batcher groups work since the store opened (read for /metrics when it is scraped). */
export interface BatchCounts {
  /** Batches that completed. */
  readonly batches: number;
  /** Operations those batches carried. */
  readonly operations: number;
}

export interface BatchPlan<Item> {
  readonly maxInFlight: number;
  /** Removes the next batch from `queue`; empty when everything queued must wait for a batch in flight. */
  take(queue: Item[]): Item[];
  /** Sends one batch and settles every item of it (or puts it back: Batcher.putBack); never rejects. */
  send(batch: Item[]): Promise<void>;
}

export class Batcher<Item> {
  private readonly queue: Item[] = [];
  private readonly inFlight = new Set<Item[]>();
  private readonly counts = { batches: 0, operations: 0 };
  private scheduled = false;
  private closed: Promise<void> | undefined;
  private whenIdle: (() => void) | undefined;

  constructor(private readonly plan: BatchPlan<Item>) {}

  /** Whether close() was called: new items are then refused. */
  get closing(): boolean {
    return this.closed !== undefined;
  }

  /** Queues an item for a coming batch; throws StoreUnavailableError once close() was called. */
  add(item: Item): void {
    if (this.closing) throw new StoreUnavailableError('the store is closing');
    this.queue.push(item);
    this.schedule();
  }

  /** Queues items again ahead of everything queued (they arrived first); called from `send`, before it resolves. */
  putBack(items: readonly Item[]): void {
    if (items.length > 0) this.queue.unshift(...items);
  }

  /** Counts a completed batch; called before its items are settled where it can be, so their callers see it. */
  counted(operations: number): void {
    this.counts.batches++;
    this.counts.operations += operations;
  }

  stats(): BatchCounts {
    return { ...this.counts };
  }

  /** Resolves once every item already accepted has settled. */
  close(): Promise<void> {
    this.closed ??= new Promise((resolve) => {
      this.whenIdle = resolve;
      this.resolveIfIdle();
    });
    return this.closed;
  }

  /**
   * The sender can no longer answer (the SQLite writer thread died): hands every batch in flight, then
   * everything queued, to `fail`. A late answer to a batch in flight is ignored.
   */
  abort(fail: (batch: Item[]) => void): void {
    const lost = [...this.inFlight];
    this.inFlight.clear();
    for (const batch of lost) fail(batch);
    if (this.queue.length > 0) fail(this.queue.splice(0));
    this.resolveIfIdle();
  }

  /**
   * setImmediate rather than at once: the items of every request parsed in this turn share a batch.
   * With every slot taken there is nothing to schedule: the next batch to finish sends what queued.
   */
  private schedule(): void {
    if (this.scheduled || this.inFlight.size >= this.plan.maxInFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight.size < this.plan.maxInFlight && this.queue.length > 0) {
      const batch = this.plan.take(this.queue);
      if (batch.length === 0) break;
      this.inFlight.add(batch);
      void this.plan.send(batch).then(() => {
        if (!this.inFlight.delete(batch)) return; // aborted: already settled
        this.pump();
      });
    }
    this.resolveIfIdle();
  }

  private resolveIfIdle(): void {
    if (this.whenIdle !== undefined && this.inFlight.size === 0 && this.queue.length === 0) this.whenIdle();
  }
}
