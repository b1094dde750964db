/**
 * Group commit for writes on PostgreSQL: writes that arrive while earlier batches
 * are in flight wait together and go out as the next batch, one statement (so one
 * transaction, one WAL flush, one round trip) for up to MAX_BATCH writes. Each
 * write's promise settles only after its batch's statement committed (or failed as
 * a whole), so a 200 still means "committed". Creates (create-batcher.ts) and
 * changes (update-batcher.ts) each have one.
 *
 * What a batch does in the database is the runner's; this file decides what goes
 * into which batch, and when:
 *
 * - A batch never holds two writes of the same id, and an id is never in two
 *   batches at once: a later write of an id waits for the earlier one's batch to
 *   finish, so writes of one id are decided in the order they arrived, exactly as if
 *   they had been sent one by one.
 * - Each batch is sorted by id, and the runner's statement writes the rows in that
 *   order. Concurrent statements that write overlapping ids (another service
 *   instance's batches) then lock them in the same order, so they wait for each
 *   other rather than deadlock.
 * - A batch whose statement failed with anything but an outage is retried one write
 *   per batch, so only the write that caused it fails. So is a batch that lost a
 *   deadlock (with a transaction that locks rows in another order): a write alone
 *   holds no lock another statement waits for while it waits itself.
 */
import { Batcher, type BatchCounts } from '../core/batcher.js';
import { StoreUnavailableError } from '../errors.js';
import { isWriteConflict } from './errors.js';

/** At most this many writes per statement: bounds how long one statement holds its locks. */
export const MAX_BATCH = 1000;

/**
 * How far down the queue one batch looks for ids it may take. Writes held back
 * (their id is in this batch or in flight) are skipped over; under a flood of one
 * id this bounds the work per batch instead of rescanning the whole queue each time.
 */
const MAX_SCAN = 4 * MAX_BATCH;

/**
 * Batches in flight at once, per batcher. Two keep the database busy: while one
 * batch's commit waits for its WAL flush (or its reply travels back), the next one
 * is already executing. More would split the same arrivals into smaller batches,
 * each paying its own flush, without making any flush faster (PostgreSQL already
 * flushes concurrent commits together), and would take more of the pool's
 * connections from reads, the webhook dispatcher and readiness checks. At least one
 * connection is always left for them.
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
   * Runs one batch (distinct ids, sorted by id) and settles each write in it, or
   * returns the writes to queue again, ahead of everything queued. Rejects only when
   * the batch's statement failed as a whole, so that nothing of it was written
   * (failures should already be translated: StoreUnavailableError for outages).
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
    return new Promise((resolve, reject) => this.batches.add({ input, id, attempts: 0, alone: false, resolve, reject }));
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
   * The statement failed, so none of the batch was written. An outage fails every
   * write in it (each would have failed alone). Any other error is most likely
   * caused by one write's data, and a lost deadlock by the batch's size, so the
   * writes are retried one per batch: only the culprit fails.
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
