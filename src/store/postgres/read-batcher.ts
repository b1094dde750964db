/**
 * Batched point reads on PostgreSQL (the DataLoader pattern): the getPlant calls that
 * arrive in one turn of the event loop go out together as one statement
 * (`... WHERE id = ANY($1)`), so a burst of N reads costs one round trip and one
 * statement instead of N. Several reads of one id in the same batch share one slot
 * (one array element, one promise).
 *
 * What the database does is the caller's (`ReadBatchDatabase`, in plant-store.ts);
 * this file decides what goes into which batch, and when.
 *
 * Consistency (read-your-writes): a read sees every write committed before it was
 * requested. A read only ever joins a slot that is still queued, never a batch whose
 * statement was already sent: a batch leaves the queue the moment it is sent, so a
 * later read of the same id starts a new slot. Every read in a batch therefore
 * arrived before its statement started, and under READ COMMITTED the statement's
 * snapshot, taken when it starts on the server, includes every commit the reader
 * could have been told about (a create's 200, a delete's 204). Keep it so: never
 * attach a read to a statement already in flight, however tempting for a hot id.
 */
import { isInt64 } from '../../domain/int64.js';
import { Batcher, type BatchCounts } from '../core/batcher.js';
import { StoreUnavailableError } from '../errors.js';
import type { VersionedPlant } from '../types.js';

/**
 * At most this many distinct ids per statement: bounds the array parameter, the reply
 * (and the time the event loop spends parsing it in one go), and how long one batch
 * makes its first read wait for its last row. Reads beyond it wait for the next batch.
 */
export const MAX_READ_BATCH = 1000;

/**
 * Read batches in flight at once. Two keep the path busy: while one batch's reply
 * travels back and is parsed, the next gathers and executes. More would mostly split
 * the same arrivals into smaller batches (one more round trip each, for no faster
 * lookup: an index probe per id is the same work either way), and would take more of
 * the pool's connections. The connections left after the create and change batches
 * (batchesInFlightFor in keyed-batcher.ts) and one more for list, delete, the
 * webhook dispatcher and readiness checks bound it; it is never below one, since
 * reads must progress even on a tiny pool (they then queue in the pool, as before).
 */
export function readBatchesInFlightFor(poolSize: number, writeBatchesInFlight: number): number {
  return Math.max(1, Math.min(2, poolSize - 1 - writeBatchesInFlight));
}

/** The statement a batch needs. Failures should already be translated (StoreUnavailableError for outages). */
export interface ReadBatchDatabase {
  /** The stored plants among `ids` (distinct), by id, read by one statement. */
  find(ids: readonly bigint[]): Promise<ReadonlyMap<bigint, VersionedPlant>>;
}

/** How well reads are being grouped: operations are reads; ids, the distinct ids asked (reads of one id in one batch share one). */
export interface ReadBatchStats extends BatchCounts {
  readonly ids: number;
}

/** The reads of one id waiting for the same batch: one promise, shared. */
interface Slot {
  readonly id: bigint;
  readonly promise: Promise<VersionedPlant | undefined>;
  readonly resolve: (plant: VersionedPlant | undefined) => void;
  readonly reject: (error: unknown) => void;
  reads: number;
}

function newSlot(id: bigint): Slot {
  let resolve!: Slot['resolve'];
  let reject!: Slot['reject'];
  const promise = new Promise<VersionedPlant | undefined>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { id, promise, resolve, reject, reads: 0 };
}

export class ReadBatcher {
  /** The slots still queued, by id: only these may be joined. */
  private readonly open = new Map<bigint, Slot>();
  private ids = 0;
  private readonly batches: Batcher<Slot>;

  constructor(
    private readonly database: ReadBatchDatabase,
    maxInFlight: number,
  ) {
    this.batches = new Batcher({ maxInFlight, take: (queue) => this.take(queue), send: (batch) => this.send(batch) });
  }

  /** The plant with this id, or undefined; rejects with its batch's failure. */
  get(id: bigint): Promise<VersionedPlant | undefined> {
    if (this.batches.closing) return Promise.reject(new StoreUnavailableError('the store is closing'));
    // No such row can exist, and the statement would fail for the whole batch.
    if (!isInt64(id)) return Promise.reject(new RangeError(`plant id ${id} is outside int64`));
    let slot = this.open.get(id);
    if (slot === undefined) {
      slot = newSlot(id);
      this.batches.add(slot);
      this.open.set(id, slot);
    }
    slot.reads++;
    return slot.promise;
  }

  stats(): ReadBatchStats {
    return { ...this.batches.stats(), ids: this.ids };
  }

  /** Resolves once every read already accepted has settled. */
  close(): Promise<void> {
    return this.batches.close();
  }

  /** A taken slot can no longer be joined: no read joins a batch in flight. */
  private take(queue: Slot[]): Slot[] {
    const batch = queue.splice(0, MAX_READ_BATCH);
    if (queue.length === 0) this.open.clear();
    else for (const slot of batch) this.open.delete(slot.id);
    return batch;
  }

  /** Never rejects: every slot of the batch is settled by the time it resolves. */
  private async send(batch: Slot[]): Promise<void> {
    let found: ReadonlyMap<bigint, VersionedPlant>;
    try {
      found = await this.database.find(batch.map((slot) => slot.id));
    } catch (error) {
      // Every read of the batch fails the same way; an outage arrives here already
      // translated (StoreUnavailableError), so each becomes a 503.
      for (const slot of batch) slot.reject(error);
      return;
    }
    this.ids += batch.length;
    this.batches.counted(batch.reduce((reads, slot) => reads + slot.reads, 0));
    for (const slot of batch) slot.resolve(found.get(slot.id));
  }
}
