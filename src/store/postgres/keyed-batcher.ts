/**
 * PostgreSQL write batches (creates: create-batcher.ts; changes: update-batcher.ts): one statement, so one
 * WAL flush and one round trip, for up to MAX_BATCH writes; a write settles once its statement committed.
 * - No id twice in a batch nor in two batches at once: the writes of one id are decided in arrival order.
 * - Sorted by id: concurrent statements (another instance's) lock rows in one order, so none deadlocks.
 * - A statement that failed, but not for an outage, goes again one write per statement: only the culprit fails.
 */
import { Batcher, type BatchCounts } from '../core/batcher.js';
import { StoreUnavailableError } from '../errors.js';
import { isWriteConflict } from './errors.js';

/** At most this many writes per statement: bounds how long one statement holds its locks. */
export const MAX_BATCH = 1000;

/** How far down the queue a batch looks for ids it may take: bounds the work under a flood of one id. */
const MAX_SCAN = 4 * MAX_BATCH;

/**
 * Two keep the database busy (one executes while the other's commit flushes); more would only split
 * arrivals into smaller batches and take connections from reads. One connection is always left over.
 */
export function batchesInFlightFor(poolSize: number): number {
  return Math.max(1, Math.min(2, poolSize - 1));
}

/** One write waiting for its batch. */
export interface PendingWrite<Input, Outcome> {
  readonly input: Input;
  readonly id: bigint;
  /** Times the runner sent it back to the queue (see BatchRunner.run). */
  attempts: number;
  /** Goes in a batch of its own: its earlier batch failed with an error that was not an outage. */
  alone: boolean;
  readonly resolve: (outcome: Outcome) => void;
  readonly reject: (error: unknown) => void;
}

export interface BatchRunner<Input, Outcome> {
  /**
   * Runs one batch (distinct ids, sorted) and settles each write, or returns those to queue again. Rejects
   * only when the statement failed as a whole (outages already translated to StoreUnavailableError).
   */
  run(batch: readonly PendingWrite<Input, Outcome>[]): Promise<readonly PendingWrite<Input, Outcome>[]>;
}

const byId = <I, O>(a: PendingWrite<I, O>, b: PendingWrite<I, O>): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export class KeyedBatcher<Input, Outcome> {
  /** Ids of the writes in batches in flight. */
  private readonly inFlightIds = new Set<bigint>();
  private readonly batches: Batcher<PendingWrite<Input, Outcome>>;

  constructor(
    private readonly runner: BatchRunner<Input, Outcome>,
    maxInFlight: number,
  ) {
    this.batches = new Batcher({ maxInFlight, take: (queue) => this.take(queue), send: (batch) => this.send(batch) });
  }

  /** Resolves once the write's batch committed (or rejects with the batch's failure). */
  write(id: bigint, input: Input): Promise<Outcome> {
    return new Promise((resolve, reject) => {
      this.batches.add({ input, id, attempts: 0, alone: false, resolve, reject });
    });
  }

  stats(): BatchCounts {
    return this.batches.stats();
  }

  /** Resolves once every write already accepted has settled. */
  close(): Promise<void> {
    return this.batches.close();
  }

  private take(queue: PendingWrite<Input, Outcome>[]): PendingWrite<Input, Outcome>[] {
    const batch: PendingWrite<Input, Outcome>[] = [];
    const held: PendingWrite<Input, Outcome>[] = [];
    const ids = new Set<bigint>();
    let next = 0;
    for (; next < queue.length && next < MAX_SCAN && batch.length < MAX_BATCH; next++) {
      const item = queue[next] as PendingWrite<Input, Outcome>;
      if (ids.has(item.id) || this.inFlightIds.has(item.id) || (item.alone && batch.length > 0)) {
        held.push(item);
        continue;
      }
      ids.add(item.id);
      batch.push(item);
      if (item.alone) {
        next++;
        break; // isolated after a failure: it cannot fail other writes again
      }
    }
    queue.splice(0, next, ...held);
    return batch.sort(byId);
  }

  /**
   * Never rejects: every write of the batch is settled or queued again by then. Its ids count as in
   * flight until it has settled, so a later write of one waits.
   */
  private async send(batch: PendingWrite<Input, Outcome>[]): Promise<void> {
    for (const item of batch) this.inFlightIds.add(item.id);
    try {
      const again = await this.runner.run(batch);
      this.batches.counted(batch.length);
      for (const item of again) item.attempts++;
      this.batches.putBack(again);
    } catch (error) {
      this.failed(batch, error);
    }
    for (const item of batch) this.inFlightIds.delete(item.id);
  }

  /**
   * Nothing was written. An outage fails every write (each would fail alone); any other error (one write's
   * data, a lost deadlock) sends the writes again one per statement.
   */
  private failed(batch: PendingWrite<Input, Outcome>[], error: unknown): void {
    const outage = error instanceof StoreUnavailableError && !isWriteConflict(error);
    if (outage || batch.length === 1) {
      for (const item of batch) item.reject(error);
      return;
    }
    for (const item of batch) item.alone = true;
    this.batches.putBack(batch);
  }
}
