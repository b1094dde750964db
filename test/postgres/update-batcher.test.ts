/**
 * The decisions of the PostgreSQL change batcher (src/store/postgres/update-batcher.ts)
 * that the real server only reaches by rare timing: what a change that its first
 * statement did not apply becomes, and what happens when a reporting statement saw
 * a plant the change applies to yet did not apply it (another writer got in between
 * its snapshot and its lock). The database here is a script of what each statement
 * answers; test/postgres/update-batching.test.ts runs the batcher on the real server.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StoreUnavailableError } from '../../src/store/errors.js';
import {
  MAX_CHANGE_ATTEMPTS,
  updateBatcher,
  type ChangeResult,
  type PendingChange,
  type UpdateBatchDatabase,
} from '../../src/store/postgres/update-batcher.js';

/** A database that answers the statements from a script, and records whether each was reporting. */
function scripted(answers: ((changes: readonly PendingChange[]) => ReadonlyMap<bigint, ChangeResult>)[]) {
  const calls: boolean[] = [];
  const database: UpdateBatchDatabase = {
    async update(changes, reporting) {
      calls.push(reporting);
      const answer = answers[calls.length - 1] ?? answers[answers.length - 1];
      return (answer as (changes: readonly PendingChange[]) => ReadonlyMap<bigint, ChangeResult>)(changes);
    },
  };
  return { database, calls };
}

const plant = (version: bigint, name = 'Fern') => ({ id: 1n, name, version });
const notApplied = new Map<bigint, ChangeResult>();
const seen = (version: bigint, name = 'Fern') =>
  new Map<bigint, ChangeResult>([[1n, { applied: false, seen: plant(version, name) }]]);

describe('the PostgreSQL change batcher', () => {
  it('applies a change in one statement that does not report', async () => {
    const { database, calls } = scripted([() => new Map([[1n, { applied: true, plant: plant(2n, 'Ivy') }]])]);
    const outcome = await updateBatcher(database, 1).write(1n, {
      change: { id: 1n, name: 'Ivy' },
      expected: undefined,
    });
    assert.deepEqual(outcome, { kind: 'updated', plant: plant(2n, 'Ivy') });
    assert.deepEqual(calls, [false]);
  });

  it('sends a change its first statement did not apply again, reporting, and answers from what that statement saw', async () => {
    for (const [expected, seenAs, kind] of [
      [[1n], seen(3n), 'precondition-failed'],
      [undefined, seen(3n, 'Ivy'), 'unchanged'],
      [undefined, new Map<bigint, ChangeResult>([[1n, { applied: false, seen: undefined }]]), 'not-found'],
    ] as const) {
      const { database, calls } = scripted([() => notApplied, () => seenAs]);
      const outcome = await updateBatcher(database, 1).write(1n, {
        change: { id: 1n, name: 'Ivy' },
        expected: expected as PendingChange['expected'],
      });
      assert.equal(outcome.kind, kind);
      assert.deepEqual(calls, [false, true]);
    }
  });

  it('a reporting statement that saw the change apply, yet did not apply it, sends it again', async () => {
    // Snapshot: version 1, which the change expects; a writer then made it version 3 before the lock.
    const { database, calls } = scripted([() => notApplied, () => seen(1n), () => seen(3n)]);
    const outcome = await updateBatcher(database, 1).write(1n, { change: { id: 1n, name: 'Ivy' }, expected: [1n] });
    assert.deepEqual(outcome, { kind: 'precondition-failed', current: plant(3n) });
    assert.deepEqual(calls, [false, true, true]);
  });

  it(`gives up after ${MAX_CHANGE_ATTEMPTS} statements, as unavailable (a retry is safe)`, async () => {
    const { database, calls } = scripted([() => notApplied, () => seen(1n)]);
    await assert.rejects(
      updateBatcher(database, 1).write(1n, { change: { id: 1n, name: 'Ivy' }, expected: [1n] }),
      StoreUnavailableError,
    );
    assert.equal(calls.length, MAX_CHANGE_ATTEMPTS);
  });
});
