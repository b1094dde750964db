/**
 * The scheduling every batching path of the stores shares (SQLite group commit,
 * PostgreSQL create and read batches): what queued during one turn of the event loop
 * goes out together, at most `maxInFlight` batches at a time, and whatever queues
 * meanwhile goes out as soon as a batch finishes.
 *
 * The owner keeps its own queue and decides what one batch is (`take`); the
 * scheduler only decides when. `close()` refuses nothing by itself (the owner checks
 * `closing` before queueing) and resolves once everything accepted has been sent and
 * settled.
 */
export interface BatchSource<Item> {
  /** Batches in flight at once. */
  readonly maxInFlight: number;
  /** How many items wait to be sent. */
  size(): number;
  /** Takes the next batch off the queue; empty when everything queued must wait for a batch in flight. */
  take(): Item[];
  /** Sends one batch and settles every item in it; never rejects. */
  send(batch: Item[]): Promise<void>;
}

export class BatchScheduler<Item> {
  private readonly inFlight = new Set<Item[]>();
  private scheduled = false;
  private closingPromise: Promise<void> | undefined;
  private whenIdle: (() => void) | undefined;

  constructor(private readonly source: BatchSource<Item>) {}

  /** Whether close() was called: the owner should then refuse new items. */
  get closing(): boolean {
    return this.closingPromise !== undefined;
  }

  /**
   * Call after queueing. setImmediate rather than sending at once: the items of every
   * request parsed in this turn of the event loop then share a batch. With every slot
   * taken there is nothing to schedule: the next batch to finish sends what queued.
   */
  schedule(): void {
    if (this.scheduled || this.inFlight.size >= this.source.maxInFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  /** Resolves once every item already accepted has settled. */
  close(): Promise<void> {
    this.closingPromise ??= new Promise((resolve) => {
      this.whenIdle = resolve;
      this.resolveIfIdle();
    });
    return this.closingPromise;
  }

  /**
   * The sender can no longer answer (the SQLite writer thread died): hands every batch
   * in flight, then everything queued, to `fail` to be settled now. A late answer to a
   * batch in flight is ignored; the next item queued starts afresh.
   */
  abort(fail: (batch: Item[]) => void): void {
    const lost = [...this.inFlight];
    this.inFlight.clear();
    for (const batch of lost) fail(batch);
    while (this.source.size() > 0) {
      const batch = this.source.take();
      if (batch.length === 0) break;
      fail(batch);
    }
    this.resolveIfIdle();
  }

  private pump(): void {
    while (this.inFlight.size < this.source.maxInFlight && this.source.size() > 0) {
      const batch = this.source.take();
      if (batch.length === 0) break; // everything queued waits for something in flight
      this.inFlight.add(batch);
      void this.source.send(batch).then(() => {
        if (!this.inFlight.delete(batch)) return; // aborted: already settled
        this.pump();
      });
    }
    this.resolveIfIdle();
  }

  private resolveIfIdle(): void {
    if (this.whenIdle !== undefined && this.inFlight.size === 0 && this.source.size() === 0) this.whenIdle();
  }
}
