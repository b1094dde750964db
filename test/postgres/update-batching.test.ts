/**
 * Group commit for changes on PostgreSQL (src/store/postgres/update-batcher.ts), on
 * the real server: concurrent changes share batch statements, and batching changes
 * nothing a client can see (changes of one id apply in arrival order, each outcome is
 * exact, a bad change fails alone, instances changing overlapping ids do not
 * deadlock, a batch that loses a deadlock is retried, closing commits what was
 * accepted).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { StoreUnavailableError } from '../../src/store/errors.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { UpdatePlantOutcome, VersionedPlant } from '../../src/store/types.js';
import { postgresAvailable } from '../support/backends.js';
import { adminRows, createTestSchema, HANG_BOUND_MS, type TestSchema, withinBound } from '../support/postgres.js';

/** Resolves once a change batch statement on `url`'s database is waiting for a row lock. */
async function untilABatchWaitsForALock(url: string): Promise<void> {
  for (let waited = 0; ; waited += 20) {
    // Only sessions holding a lock on a table of this schema: other tests (and other runs) share the server.
    const waiting = await adminRows<{ count: string }>(
      url,
      'SELECT count(*) AS count FROM pg_stat_activity a ' +
        "WHERE wait_event_type = 'Lock' AND query LIKE '%WITH input AS%' " +
        'AND EXISTS (SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation ' +
        'WHERE l.pid = a.pid AND c.relnamespace = current_schema()::regnamespace)',
    );
    if (waiting[0]?.count === '1') return;
    assert.ok(waited < HANG_BOUND_MS, 'no change batch waited for the lock');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function seed(store: PostgresStore, from: number, count: number): Promise<void> {
  await Promise.all(
    Array.from({ length: count }, (_, i) =>
      store.plants.createPlant({ id: BigInt(from + i), name: `plant ${from + i}` }),
    ),
  );
}

function versionOf(outcome: UpdatePlantOutcome): bigint {
  assert.equal(outcome.kind, 'updated');
  return (outcome as Extract<UpdatePlantOutcome, { kind: 'updated' }>).plant.version;
}

describe('PostgreSQL changes go in batches', { skip: !postgresAvailable() }, () => {
  describe('on one store', () => {
    let schema: TestSchema;
    let store: PostgresStore;
    before(async () => {
      schema = await createTestSchema();
      store = await PostgresStore.open({ url: schema.url, poolSize: 5 });
    });
    after(async () => {
      await store?.close();
      await schema?.drop();
    });

    it('500 concurrent changes of 500 plants share a few statements, and each is applied once', async (t) => {
      await seed(store, 1_000, 500);
      const before = store.updateBatchStats();
      const outcomes = await withinBound(
        '500 changes',
        Promise.all(
          Array.from({ length: 500 }, (_, i) =>
            store.plants.updatePlant({ id: BigInt(1_000 + i), name: `renamed ${i}`, tag: 'changed' }),
          ),
        ),
      );
      const versions = new Set(outcomes.map(versionOf));
      assert.equal(versions.size, 500, 'every change has its own version');
      const stats = store.updateBatchStats();
      assert.equal(stats.operations - before.operations, 500);
      assert.ok(stats.batches - before.batches <= 50, `500 changes took ${stats.batches - before.batches} statements`);
      t.diagnostic(`500 changes in ${stats.batches - before.batches} statements`);
      const rows = await adminRows<{ count: string }>(
        schema.url,
        "SELECT count(*) AS count FROM plants WHERE id BETWEEN 1000 AND 1499 AND name = 'renamed ' || (id - 1000) AND tag = 'changed'",
      );
      assert.equal(rows[0]?.count, '500');
    });

    it('changes of one id sent together apply in the order they arrived', async () => {
      await seed(store, 2_000, 1);
      const outcomes = await withinBound(
        '30 changes of one id',
        Promise.all(Array.from({ length: 30 }, (_, i) => store.plants.updatePlant({ id: 2_000n, name: `step ${i}` }))),
      );
      const versions = outcomes.map(versionOf);
      for (let i = 1; i < versions.length; i++)
        assert.ok((versions[i] as bigint) > (versions[i - 1] as bigint), `change ${i} came after change ${i - 1}`);
      assert.deepEqual((await store.plants.getPlant(2_000n))?.name, 'step 29');
    });

    it('50 changes expecting the same version, sent together: one applies, 49 fail their precondition', async () => {
      await seed(store, 3_000, 1);
      const version = (await store.plants.getPlant(3_000n))?.version as bigint;
      const outcomes = await withinBound(
        '50 conditional changes',
        Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            store.plants.updatePlant({ id: 3_000n, name: `writer ${i}` }, [version]),
          ),
        ),
      );
      const kinds = outcomes.map((o) => o.kind);
      assert.equal(kinds.filter((k) => k === 'updated').length, 1);
      assert.equal(kinds.filter((k) => k === 'precondition-failed').length, 49);
    });

    it('one batch, every outcome: applied, nothing to change, another version, absent', async () => {
      await seed(store, 4_000, 3);
      const stale = (await store.plants.getPlant(4_002n))?.version as bigint;
      await store.plants.updatePlant({ id: 4_002n, name: 'moved on' });
      const [updated, unchanged, failed, absent] = await withinBound(
        'mixed batch',
        Promise.all([
          store.plants.updatePlant({ id: 4_000n, name: 'new name' }),
          store.plants.updatePlant({ id: 4_001n, name: 'plant 4001', tag: null }),
          store.plants.updatePlant({ id: 4_002n, name: 'late writer' }, [stale]),
          store.plants.updatePlant({ id: 4_999n, name: 'nobody' }),
        ]),
      );
      assert.equal(updated?.kind, 'updated');
      assert.equal(unchanged?.kind, 'unchanged');
      assert.equal(failed?.kind, 'precondition-failed');
      assert.equal(failed?.kind === 'precondition-failed' && failed.current.name, 'moved on');
      assert.equal(absent?.kind, 'not-found');
    });

    it('a change the database refuses for its data fails alone; the changes batched with it are committed', async () => {
      await seed(store, 5_000, 21);
      const good = Array.from({ length: 20 }, (_, i) => ({ id: BigInt(5_000 + i), name: `good ${i}` }));
      // A NUL character: HTTP validation keeps it out, PostgreSQL text cannot hold it (SQLSTATE 22021).
      const bad = { id: 5_020n, name: 'bad \u0000 name' };
      const settled = await withinBound(
        'mixed batch',
        Promise.allSettled([...good, bad].map((change) => store.plants.updatePlant(change))),
      );
      const failed = settled.pop();
      assert.equal(failed?.status, 'rejected');
      assert.ok(
        !((failed as PromiseRejectedResult).reason instanceof StoreUnavailableError),
        'a data error is not an outage',
      );
      assert.ok(settled.every((s) => s.status === 'fulfilled' && s.value.kind === 'updated'));
      const rows = await adminRows<{ count: string }>(
        schema.url,
        "SELECT count(*) AS count FROM plants WHERE id BETWEEN 5000 AND 5020 AND name LIKE 'good %'",
      );
      assert.equal(rows[0]?.count, '20');
    });
  });

  describe('a deadlock with another transaction', () => {
    let schema: TestSchema;
    let store: PostgresStore;
    before(async () => {
      schema = await createTestSchema();
      store = await PostgresStore.open({ url: schema.url, poolSize: 5 });
      await seed(store, 7_000, 2);
    });
    after(async () => {
      await store?.close();
      await schema?.drop();
    });

    it('the batch that loses it is retried change by change: every change applies, none gets an outage', async () => {
      const other = new pg.Client({ connectionString: schema.url });
      await other.connect();
      try {
        // The batch, not this transaction, must be the one PostgreSQL aborts: it checks for the cycle first.
        await other.query("SET deadlock_timeout = '20s'");
        await other.query('BEGIN');
        await other.query("UPDATE plants SET name = 'held' WHERE id = 7001");
        // One batch: it updates 7000, then waits for this transaction's lock on 7001.
        const changes = Promise.all([
          store.plants.updatePlant({ id: 7_000n, name: 'first' }),
          store.plants.updatePlant({ id: 7_001n, name: 'second' }),
        ]);
        await untilABatchWaitsForALock(schema.url);
        // Closes the cycle: PostgreSQL aborts the batch after its deadlock_timeout (1 s), and this update goes on.
        await withinBound('the other transaction', other.query("UPDATE plants SET name = 'held too' WHERE id = 7000"));
        await other.query('COMMIT');
        const outcomes = await withinBound('the changes', changes);
        assert.deepEqual(
          outcomes.map((o) => o.kind),
          ['updated', 'updated'],
        );
        assert.deepEqual(
          [(await store.plants.getPlant(7_000n))?.name, (await store.plants.getPlant(7_001n))?.name],
          ['first', 'second'],
        );
      } finally {
        await other.end();
      }
    });
  });

  describe("a change that waits for another writer's lock", () => {
    let schema: TestSchema;
    let store: PostgresStore;
    before(async () => {
      schema = await createTestSchema();
      store = await PostgresStore.open({ url: schema.url, poolSize: 5 });
      await seed(store, 8_000, 2);
    });
    after(async () => {
      await store?.close();
      await schema?.drop();
    });

    /** Runs `change` while another transaction holds the plant's row with `write`, and commits that transaction once
     * `change` waits for it. */
    async function behindAnotherWriter(
      write: string,
      change: () => Promise<UpdatePlantOutcome>,
    ): Promise<UpdatePlantOutcome> {
      const other = new pg.Client({ connectionString: schema.url });
      await other.connect();
      try {
        await other.query('BEGIN');
        await other.query(write);
        const outcome = change();
        await untilABatchWaitsForALock(schema.url);
        await other.query('COMMIT');
        return await withinBound('the change', outcome);
      } finally {
        await other.end();
      }
    }

    it('is decided on what that writer committed: its If-Match then names an old version (412 with the new one)', async () => {
      const read = (await store.plants.getPlant(8_000n)) as VersionedPlant;
      const outcome = await behindAnotherWriter(
        "UPDATE plants SET name = 'theirs', version = nextval('plant_versions') WHERE id = 8000",
        () => store.plants.updatePlant({ id: 8_000n, name: 'mine' }, [read.version]),
      );
      assert.equal(outcome.kind, 'precondition-failed');
      assert.equal(outcome.kind === 'precondition-failed' && outcome.current.name, 'theirs');
      assert.ok(outcome.kind === 'precondition-failed' && outcome.current.version > read.version);
    });

    it('is decided on what that writer committed: the same change made already is unchanged, with that version', async () => {
      const outcome = await behindAnotherWriter(
        "UPDATE plants SET name = 'same', version = nextval('plant_versions') WHERE id = 8001",
        () => store.plants.updatePlant({ id: 8_001n, name: 'same' }),
      );
      const stored = await store.plants.getPlant(8_001n);
      assert.deepEqual(outcome, { kind: 'unchanged', plant: stored });
    });
  });

  describe('overlapping batches', () => {
    let schema: TestSchema;
    let stores: PostgresStore[];
    before(async () => {
      schema = await createTestSchema();
      stores = [
        await PostgresStore.open({ url: schema.url, poolSize: 5 }),
        await PostgresStore.open({ url: schema.url, poolSize: 5 }),
      ];
      await seed(stores[0] as PostgresStore, 0, 200);
    });
    after(async () => {
      for (const store of stores ?? []) await store.close();
      await schema?.drop();
    });

    it('two instances changing the same 200 plants in opposite orders: every change applies (no deadlock)', async () => {
      const [first, second] = stores as [PostgresStore, PostgresStore];
      for (let round = 1; round <= 5; round++) {
        const ids = Array.from({ length: 200 }, (_, i) => BigInt(i));
        const outcomes = await withinBound(
          `round ${round}`,
          Promise.all([
            ...ids.map((id) => first.plants.updatePlant({ id, name: `first ${round}` })),
            ...[...ids].reverse().map((id) => second.plants.updatePlant({ id, name: `second ${round}` })),
          ]),
        );
        assert.ok(
          outcomes.every((o) => o.kind === 'updated'),
          `round ${round}: ${outcomes.filter((o) => o.kind !== 'updated').length} changes did not apply`,
        );
      }
    });
  });

  describe('closing the store', () => {
    it('commits every change it accepted before closing, and refuses the ones after', async () => {
      const schema = await createTestSchema();
      try {
        const store = await PostgresStore.open({ url: schema.url, poolSize: 3 });
        await seed(store, 0, 300);
        const accepted = Array.from({ length: 300 }, (_, i) =>
          store.plants.updatePlant({ id: BigInt(i), name: `changed ${i}` }),
        );
        const closed = store.close();
        await assert.rejects(store.plants.updatePlant({ id: 1n, name: 'late' }), StoreUnavailableError);
        const outcomes = await withinBound('accepted changes', Promise.all(accepted));
        assert.ok(outcomes.every((o) => o.kind === 'updated'));
        await withinBound('close', closed);
        const rows = await adminRows<{ count: string }>(
          schema.url,
          "SELECT count(*) AS count FROM plants WHERE name LIKE 'changed %'",
        );
        assert.equal(rows[0]?.count, '300');
      } finally {
        await schema.drop();
      }
    });
  });
});
