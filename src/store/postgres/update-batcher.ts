/**
 * PostgreSQL changes in batches: one UPDATE whose WHERE holds each change's precondition and its "changes
 * something" test, so the row itself decides. A change not applied goes again in a statement that also
 * reports what its snapshot saw (absent, another version, already so): the outcome it would have had alone.
 * (The first statement goes without reporting: it costs an index probe per change and most changes apply.)
 * Seen applicable yet skipped means another writer got in before the lock: it goes again, after that writer.
 */
import { changed, samePlant, versionMatches } from '../../domain/plant.js';
import { StoreUnavailableError } from '../errors.js';
import type { ExpectedVersion, PlantChange, UpdatePlantOutcome, VersionedPlant } from '../types.js';
import { KeyedBatcher, type BatchRunner } from './keyed-batcher.js';

export interface PendingChange {
  readonly change: PlantChange;
  readonly expected: ExpectedVersion | undefined;
}

/** What the batch statement did with one change. */
export type ChangeResult =
  /** Applied: the plant after the change. */
  | { readonly applied: true; readonly plant: VersionedPlant }
  /** Not applied: the plant as the statement's snapshot saw it (undefined: absent). */
  | { readonly applied: false; readonly seen: VersionedPlant | undefined };

/** The statement a batch needs. Failures should already be translated (StoreUnavailableError for outages). */
export interface UpdateBatchDatabase {
  /**
   * Applies the changes (distinct ids, sorted by id) in one atomic statement, each
   * only where its plant's version is one it expects and where it changes something,
   * with the outbox rows of those it applied; resolves, once the statement
   * committed, with the changes it applied, by id, and when `reporting`, with what
   * it saw of each change it did not apply.
   */
  update(changes: readonly PendingChange[], reporting: boolean): Promise<ReadonlyMap<bigint, ChangeResult>>;
}

/**
 * How often a change goes again: once when its first statement did not apply it,
 * then each time other writers got to its plant between a statement's snapshot and
 * its lock. Each of those needs another write of that plant in that gap of
 * microseconds, so reaching this takes sustained contention.
 */
export const MAX_CHANGE_ATTEMPTS = 10;

export function updateBatcher(
  database: UpdateBatchDatabase,
  maxInFlight: number,
): KeyedBatcher<PendingChange, UpdatePlantOutcome> {
  return new KeyedBatcher(updateRunner(database), maxInFlight);
}

function updateRunner(database: UpdateBatchDatabase): BatchRunner<PendingChange, UpdatePlantOutcome> {
  return {
    async run(batch) {
      const reporting = batch.some((item) => item.attempts > 0);
      const results = await database.update(
        batch.map((item) => item.input),
        reporting,
      );
      const again = [];
      for (const item of batch) {
        const result = results.get(item.id);
        const outcome = result === undefined ? undefined : outcomeOf(item.input, result);
        if (result === undefined && reporting)
          item.reject(new Error(`the batch statement said nothing of plant ${item.id}`));
        else if (outcome !== undefined) item.resolve(outcome);
        else if (item.attempts + 1 >= MAX_CHANGE_ATTEMPTS)
          item.reject(
            new StoreUnavailableError(`plant ${item.id} was changed by others too often while being changed; retry`),
          );
        else again.push(item);
      }
      return again;
    },
  };
}

/** The change's outcome, or undefined when a writer got in between and it must go again. */
function outcomeOf({ change, expected }: PendingChange, result: ChangeResult): UpdatePlantOutcome | undefined {
  if (result.applied) return { kind: 'updated', plant: result.plant };
  const { seen } = result;
  if (seen === undefined) return { kind: 'not-found' };
  if (!versionMatches(expected, seen.version)) return { kind: 'precondition-failed', current: seen };
  if (samePlant(seen, changed(seen, change))) return { kind: 'unchanged', plant: seen };
  return undefined;
}
