/**
 * The scheduling both PostgreSQL batchers share (create-batcher.ts, read-batcher.ts):
 * what queued during one turn of the event loop goes out together, at most
 * `maxBatchesInFlight` batches at a time, and whatever queues meanwhile goes out as
 * soon as a batch finishes. `close()` refuses nothing by itself (the subclass checks
 * `closing`) and resolves once everything accepted has been sent and settled.
 */
export abstract class BatchPump<Item> {
  private batchesInFlight = 0;
  private pumpScheduled = false;
  private closingPromise: Promise<void> | undefined;
  private whenIdle: (() => void) | undefined;

  protected constructor(private readonly maxBatchesInFlight: number) {}

  /** How many items wait to be sent. */
  protected abstract queuedCount(): number;
  /** Takes the next batch off the queue; empty when everything queued must wait. */
  protected abstract takeBatch(): Item[];
  /** Sends one batch and settles every item in it; never rejects. */
  protected abstract send(batch: Item[]): Promise<void>;

  /** Whether close() was called: new items should then be refused. */
  protected get closing(): boolean {
    return this.closingPromise !== undefined;
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
   * setImmediate rather than sending at once: the items of every request parsed in
   * this turn of the event loop then share a batch. With every slot taken there is
   * nothing to schedule: the next batch to finish sends what has queued.
   */
  protected schedulePump(): void {
    if (this.pumpScheduled || this.batchesInFlight >= this.maxBatchesInFlight) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    while (this.batchesInFlight < this.maxBatchesInFlight && this.queuedCount() > 0) {
      const batch = this.takeBatch();
      if (batch.length === 0) break; // everything queued waits for something in flight
      this.batchesInFlight++;
      void this.send(batch).then(() => {
        this.batchesInFlight--;
        this.pump();
        this.resolveIfIdle();
      });
    }
  }

  private resolveIfIdle(): void {
    if (this.whenIdle !== undefined && this.batchesInFlight === 0 && this.queuedCount() === 0) this.whenIdle();
  }
}
