/** What a store reports about one kind of batch (read for /metrics when it is scraped). */
export interface BatchCounts {
  /** Batches that completed. */
  readonly batches: number;
  /** Operations those batches carried. */
  readonly operations: number;
}
