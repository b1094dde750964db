/**
 * Group commit for creates on PostgreSQL: creates that arrive while earlier batches
 * are in flight wait together and go out as the next batch, one statement (so one
 * transaction, one WAL flush, one round trip) for up to MAX_BATCH creates. Each
 * create's promise settles only after its batch's statement committed (or failed as
 * a whole), so a 200 still means "committed".
 *
 * What the database does is the caller's (`CreateBatchDatabase`, in plant-store.ts);
 * this file decides what goes into which batch, and when:
 *
 * - A batch never holds two creates of the same id, and an id is never in two
 *   batches at once: a later create of an id waits for the earlier one's batch to
 *   finish, so creates of one id are decided in the order they arrived (the first
 *   creates, a same-body retry replays, a different body conflicts), exactly as if
 *   they had been sent one by one.
 * - Each batch is sorted by id. Concurrent statements that insert overlapping ids
 *   (another service instance's batches) then take the primary key's insertion locks
 *   in the same order, so they wait for each other but never deadlock.
 * - Ids that collided are classified by one lookup; an id whose row was deleted in
 *   between is free again and its create goes back to the front of the queue, a
 *   bounded number of times.
 */
import { samePlant } from '../../domain/same-plant.js';
import { BatchScheduler } from '../core/batch-scheduler.js';
import { StoreUnavailableError } from '../errors.js';
import type { CreatePlantOutcome, PlantRecord, VersionedPlant } from '../types.js';

/** At most this many creates per statement: bounds how long one statement holds its locks. */
export const MAX_BATCH = 1000;

/**
 * How far down the queue one batch looks for ids it may take. Creates held back
 * (their id is in this batch or in flight) are skipped over; under a flood of one
 * id this bounds the work per batch instead of rescanning the whole queue each time.
 */
const MAX_SCAN = 4 * MAX_BATCH;

/**
 * How often a create retries when the row it collided with was deleted before it
 * could be read. Each retry needs another client to delete the id again in that
 * gap, so reaching this takes sustained, deliberate contention.
 */
export const MAX_CREATE_ATTEMPTS = 10;

/**
 * Batches in flight at once. Two keep the database busy: while one batch's commit
 * waits for its WAL flush (or its reply travels back), the next one is already
 * executing. More would split the same arrivals into smaller batches, each paying
 * its own flush, without making any flush faster (PostgreSQL already flushes
 * concurrent commits together), and would take more of the pool's connections from
 * reads, the webhook dispatcher and readiness checks. At least one connection is
 * always left for them.
 */
export function batchesInFlightFor(poolSize: number): number {
  return Math.max(1, Math.min(2, poolSize - 1));
}

/** The statements a batch needs. Failures should already be translated (StoreUnavailableError for outages). */
export interface CreateBatchDatabase {
  /**
   * Inserts the plants (distinct ids, sorted by id) in one atomic statement, skipping
   * ids that exist, with the webhook outbox rows of those it inserted; resolves with
   * the versions of the ids it inserted, by id, once the statement committed.
   */
  insert(plants: readonly PlantRecord[]): Promise<ReadonlyMap<bigint, bigint>>;
  /** The stored plants among `ids`, by id. */
  find(ids: readonly bigint[]): Promise<ReadonlyMap<bigint, VersionedPlant>>;
}

/** Counters since the store opened: how well creates are being grouped. */
export interface CreateBatchStats {
  /** Batch statements committed. */
  readonly batches: number;
  /** Creates those statements carried (a create retried after a deleted row counts again). */
  readonly creates: number;
}

interface PendingCreate {
  readonly plant: PlantRecord;
  attempts: number;
  /** Goes in a batch of its own: its earlier batch failed with an error that was not an outage. */
  alone: boolean;
  readonly resolve: (outcome: CreatePlantOutcome) => void;
  readonly reject: (error: unknown) => void;
}

const byId = (a: PendingCreate, b: PendingCreate): number => (a.plant.id < b.plant.id ? -1 : a.plant.id > b.plant.id ? 1 : 0);

export class CreateBatcher {
  private queue: PendingCreate[] = [];
  /** Ids of the creates in batches in flight. */
  private readonly inFlightIds = new Set<bigint>();
  private readonly counters = { batches: 0, creates: 0 };
  private readonly scheduler: BatchScheduler<PendingCreate>;

  constructor(
    private readonly database: CreateBatchDatabase,
    maxInFlight: number,
  ) {
    this.scheduler = new BatchScheduler({
      maxInFlight,
      size: () => this.queue.length,
      take: () => this.take(),
      send: (batch) => this.send(batch),
    });
  }

  /** Resolves once the plant's batch committed (or rejects with the batch's failure). */
  create(plant: PlantRecord): Promise<CreatePlantOutcome> {
    if (this.scheduler.closing) return Promise.reject(new StoreUnavailableError('the store is closing'));
    return new Promise((resolve, reject) => {
      this.queue.push({ plant, attempts: 0, alone: false, resolve, reject });
      this.scheduler.schedule();
    });
  }

  stats(): CreateBatchStats {
    return { ...this.counters };
  }

  /** Resolves once every create already accepted has settled. */
  close(): Promise<void> {
    return this.scheduler.close();
  }

  /** Its ids count as in flight until the batch has settled, so a later create of one waits. */
  private async send(batch: PendingCreate[]): Promise<void> {
    for (const item of batch) this.inFlightIds.add(item.plant.id);
    await this.commit(batch);
    for (const item of batch) this.inFlightIds.delete(item.plant.id);
  }

  private take(): PendingCreate[] {
    const batch: PendingCreate[] = [];
    const held: PendingCreate[] = [];
    const ids = new Set<bigint>();
    let next = 0;
    for (; next < this.queue.length && next < MAX_SCAN && batch.length < MAX_BATCH; next++) {
      const item = this.queue[next] as PendingCreate;
      const id = item.plant.id;
      if (ids.has(id) || this.inFlightIds.has(id) || (item.alone && batch.length > 0)) {
        held.push(item);
        continue;
      }
      ids.add(id);
      batch.push(item);
      if (item.alone) {
        next++;
        break; // isolated after a failure: it cannot fail other creates again
      }
    }
    const rest = this.queue.slice(next);
    this.queue = held.length === 0 ? rest : held.concat(rest);
    return batch.sort(byId);
  }

  /** Never rejects: every create in the batch is settled (or queued again) by the time it resolves. */
  private async commit(batch: PendingCreate[]): Promise<void> {
    try {
      await this.run(batch);
    } catch (error) {
      // A bug, not a database failure (those are handled below): still, no create may hang.
      for (const item of batch) item.reject(error);
    }
  }

  private async run(batch: PendingCreate[]): Promise<void> {
    let inserted: ReadonlyMap<bigint, bigint>;
    try {
      inserted = await this.database.insert(batch.map((item) => item.plant));
    } catch (error) {
      this.failed(batch, error);
      return;
    }
    this.counters.batches++;
    this.counters.creates += batch.length;
    const collided: PendingCreate[] = [];
    for (const item of batch) {
      const version = inserted.get(item.plant.id);
      if (version !== undefined) item.resolve({ kind: 'created', plant: { ...item.plant, version } });
      else collided.push(item);
    }
    if (collided.length > 0) await this.classify(collided);
  }

  /** Creates whose id existed: a replay when the stored plant is the same, else a conflict. */
  private async classify(collided: PendingCreate[]): Promise<void> {
    let stored: ReadonlyMap<bigint, VersionedPlant>;
    try {
      stored = await this.database.find(collided.map((item) => item.plant.id));
    } catch (error) {
      for (const item of collided) item.reject(error);
      return;
    }
    const again: PendingCreate[] = [];
    for (const item of collided) {
      const existing = stored.get(item.plant.id);
      if (existing !== undefined) {
        item.resolve(samePlant(existing, item.plant) ? { kind: 'replayed', plant: existing } : { kind: 'conflict', existing });
      } else if (++item.attempts >= MAX_CREATE_ATTEMPTS) {
        item.reject(new StoreUnavailableError(`plant ${item.plant.id} was deleted and recreated too often while being created; retry`));
      } else {
        again.push(item); // deleted in between: the id is free again
      }
    }
    // At the front: they arrived before anything still queued.
    if (again.length > 0) this.queue = again.concat(this.queue);
  }

  /**
   * The statement failed, so none of the batch was written. An outage fails every
   * create in it (each would have failed alone). Any other error is most likely
   * caused by one create's data, so the creates are retried one per batch and only
   * the culprit fails.
   */
  private failed(batch: PendingCreate[], error: unknown): void {
    if (error instanceof StoreUnavailableError || batch.length === 1) {
      for (const item of batch) item.reject(error);
      return;
    }
    for (const item of batch) item.alone = true;
    this.queue = batch.concat(this.queue);
  }
}
