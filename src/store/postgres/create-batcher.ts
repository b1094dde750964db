/**
 * PostgreSQL creates in batches: insert every plant whose id is free, with its outbox rows, then read the
 * ids that collided in one lookup: the same plant is a replay, another a conflict. An id deleted in between
 * is free again: its create goes again, a bounded number of times.
 */
import { samePlant } from '../../domain/plant.js';
import { StoreUnavailableError } from '../errors.js';
import type { CreatePlantOutcome, PlantRecord, VersionedPlant } from '../types.js';
import { KeyedBatcher, type BatchRunner, type PendingWrite } from './keyed-batcher.js';

/** Retries when the colliding row was deleted before it could be read: reaching this takes deliberate contention. */
export const MAX_CREATE_ATTEMPTS = 10;

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

type PendingCreate = PendingWrite<PlantRecord, CreatePlantOutcome>;

export function createBatcher(
  database: CreateBatchDatabase,
  maxInFlight: number,
): KeyedBatcher<PlantRecord, CreatePlantOutcome> {
  return new KeyedBatcher(createRunner(database), maxInFlight);
}

function createRunner(database: CreateBatchDatabase): BatchRunner<PlantRecord, CreatePlantOutcome> {
  return {
    async run(batch) {
      const inserted = await database.insert(batch.map((item) => item.input));
      const collided: PendingCreate[] = [];
      for (const item of batch) {
        const version = inserted.get(item.id);
        if (version !== undefined) item.resolve({ kind: 'created', plant: { ...item.input, version } });
        else collided.push(item);
      }
      return collided.length === 0 ? [] : classify(database, collided);
    },
  };
}

/** Creates whose id existed: a replay when the stored plant is the same, else a conflict; the ids deleted since go
 * again. */
async function classify(database: CreateBatchDatabase, collided: PendingCreate[]): Promise<PendingCreate[]> {
  let stored: ReadonlyMap<bigint, VersionedPlant>;
  try {
    stored = await database.find(collided.map((item) => item.id));
  } catch (error) {
    for (const item of collided) item.reject(error);
    return [];
  }
  const again: PendingCreate[] = [];
  for (const item of collided) {
    const existing = stored.get(item.id);
    if (existing !== undefined) {
      item.resolve(
        samePlant(existing, item.input) ? { kind: 'replayed', plant: existing } : { kind: 'conflict', existing },
      );
    } else if (item.attempts + 1 >= MAX_CREATE_ATTEMPTS) {
      item.reject(
        new StoreUnavailableError(`plant ${item.id} was deleted and recreated too often while being created; retry`),
      );
    } else {
      again.push(item); // deleted in between: the id is free again
    }
  }
  return again;
}
