/**
 * Changes on PostgreSQL go in batches (keyed-batcher.ts decides which changes share
 * a statement): one UPDATE for the batch, whose WHERE holds each change's
 * precondition and its "changes something" test, so the database decides them on
 * the row itself. Then one lookup says, of the changes that updated nothing, which
 * found no plant, which another version, and which nothing to change.
 */
import { versionMatches } from '../../domain/plant.js';
import type { ExpectedVersion, PlantChange, UpdatePlantOutcome, VersionedPlant } from '../types.js';
import { KeyedBatcher, type BatchRunner, type PendingWrite } from './keyed-batcher.js';

export interface PendingChange {
  readonly change: PlantChange;
  readonly expected: ExpectedVersion | undefined;
}

/** The statements a batch needs. Failures should already be translated (StoreUnavailableError for outages). */
export interface UpdateBatchDatabase {
  /**
   * Applies the changes (distinct ids, sorted by id) in one atomic statement, each
   * only where its plant's version is one it expects and where it changes something,
   * with the outbox rows of those it applied; resolves with the plants it changed,
   * by id, once the statement committed.
   */
  update(changes: readonly PendingChange[]): Promise<ReadonlyMap<bigint, VersionedPlant>>;
  /** The stored plants among `ids`, by id. */
  find(ids: readonly bigint[]): Promise<ReadonlyMap<bigint, VersionedPlant>>;
}

type PendingUpdate = PendingWrite<PendingChange, UpdatePlantOutcome>;

export function updateBatcher(database: UpdateBatchDatabase, maxInFlight: number): KeyedBatcher<PendingChange, UpdatePlantOutcome> {
  return new KeyedBatcher(updateRunner(database), maxInFlight);
}

function updateRunner(database: UpdateBatchDatabase): BatchRunner<PendingChange, UpdatePlantOutcome> {
  return {
    async run(batch) {
      const updated = await database.update(batch.map((item) => item.input));
      const missed: PendingUpdate[] = [];
      for (const item of batch) {
        const plant = updated.get(item.id);
        if (plant !== undefined) item.resolve({ kind: 'updated', plant });
        else missed.push(item);
      }
      if (missed.length > 0) await classify(database, missed);
      return [];
    },
  };
}

/**
 * Changes that updated nothing: the plant is absent, at another version, or already
 * so. Read in a new snapshot, after any writer the statement waited for.
 */
async function classify(database: UpdateBatchDatabase, missed: PendingUpdate[]): Promise<void> {
  let stored: ReadonlyMap<bigint, VersionedPlant>;
  try {
    stored = await database.find(missed.map((item) => item.id));
  } catch (error) {
    for (const item of missed) item.reject(error);
    return;
  }
  for (const item of missed) {
    const current = stored.get(item.id);
    if (current === undefined) item.resolve({ kind: 'not-found' });
    else if (!versionMatches(item.input.expected, current.version)) item.resolve({ kind: 'precondition-failed', current });
    else item.resolve({ kind: 'unchanged', plant: current });
  }
}
