/**
 * PostgreSQL point reads in batches (the DataLoader pattern): the reads of one turn of the event loop go as
 * one `WHERE id = ANY($1)` statement; reads of one id in a batch share one slot.
 * Read-your-writes: a read joins only a slot still queued, never a statement already sent, so every read in
 * a statement arrived before it started, and its READ COMMITTED snapshot holds every commit already told.
 */
import { isInt64 } from '../../domain/int64.js';
import { Batcher, type BatchCounts } from '../core/batcher.js';
import { StoreUnavailableError } from '../errors.js';
import type { VersionedPlant } from '../types.js';

/** Distinct ids per statement: bounds the reply parsed in one go, and how long a first read waits for the last. */
export const MAX_READ_BATCH = 1000;

/**
 * Two keep the path busy (one reply is parsed while the next batch executes); more would only split arrivals.
 * Bounded by the connections left after the write batches and one more for the rest; never below one.
 */
export function readBatchesInFlightFor(poolSize: number, writeBatchesInFlight: number): number {
  return Math.max(1, Math.min(2, poolSize - 1 - writeBatchesInFlight));
}

/** The statement a batch needs. Failures should already be translated (StoreUnavailableError for outages). */
export interface ReadBatchDatabase {
  /** The stored plants among `ids` (distinct), by id, read by one statement. */
  find(ids: readonly bigint[]): Promise<ReadonlyMap<bigint, VersionedPlant>>;
}

/** Operations are reads; `ids`, the distinct ids asked (the reads of one id in one batch share one). */
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
