/**
 * Batched point reads on PostgreSQL (src/store/postgres/read-batcher.ts), on the real
 * server: concurrent gets share batch statements, and batching changes nothing a
 * client can see (exact int64 ids, absent ids undefined, read-your-writes, outages
 * 503 for every read of the batch, no hang, close answers what it accepted).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { Errors } from '../../src/http/errors.js';
import { StoreUnavailableError } from '../../src/store/errors.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { MAX_READ_BATCH } from '../../src/store/postgres/read-batcher.js';
import type { PlantRecord } from '../../src/store/types.js';
import { postgresAvailable, postgresBackend } from '../support/backends.js';
import { bearer, createHarness, postPlant, type Harness } from '../support/harness.js';
import { createTestSchema, type TestSchema, twoInstancesOnNewSchema, withinBound } from '../support/postgres.js';
import { harnessBehindProxy, type ProxiedHarness } from '../support/postgres-harness.js';
import type { TcpProxy } from '../support/tcp-proxy.js';
import { unversioned } from '../support/assertions.js';

const INT64_EXTREMES = [
  -9223372036854775808n,
  -9223372036854775807n,
  9223372036854775807n,
  9223372036854775806n,
  9007199254740993n,
  -9007199254740993n,
  9007199254740992n,
  9007199254740991n,
  0n,
  -1n,
];

const plantFor = (id: bigint): PlantRecord =>
  id % 3n === 0n ? { id, name: `plant ${id}` } : { id, name: `plant ${id}`, tag: `t${id % 7n}` };

describe('PostgreSQL point reads go in batches', { skip: !postgresAvailable() }, () => {
  describe('on one store', () => {
    let instances: Awaited<ReturnType<typeof twoInstancesOnNewSchema>>;
    let store: PostgresStore;
    let other: PostgresStore;
    before(async () => {
      instances = await twoInstancesOnNewSchema();
      ({ store, other } = instances);
    });
    after(() => instances?.close());

    it('concurrent gets of stored, missing, repeated and extreme ids resolve exactly, in far fewer statements', async (t) => {
      const stored = [...INT64_EXTREMES, ...Array.from({ length: 1200 }, (_, i) => BigInt(10_000 + 2 * i))];
      // One id in three is stored with no tag, which must come back without the key.
      await withinBound('creates', Promise.all(stored.map((id) => store.plants.createPlant(plantFor(id)))));
      const missing = [
        ...Array.from({ length: 300 }, (_, i) => BigInt(10_001 + 2 * i)),
        9223372036854775805n,
        -9223372036854775806n,
        9007199254740994n,
      ];
      const storedSet = new Set(stored);
      // Every id at least once, many several times, interleaved.
      const requested = [
        ...stored,
        ...missing,
        ...stored.filter((_, i) => i % 4 === 0),
        ...INT64_EXTREMES,
        ...INT64_EXTREMES,
        ...missing.slice(0, 50),
      ];
      const distinct = new Set(requested).size;

      const before = store.readBatchStats();
      const results = await withinBound('gets', Promise.all(requested.map((id) => store.plants.getPlant(id))));
      const stats = store.readBatchStats();

      results.forEach((result, i) => {
        const id = requested[i] as bigint;
        assert.deepEqual(unversioned(result), storedSet.has(id) ? plantFor(id) : undefined, `get ${id}`);
      });
      for (const result of results) if (result !== undefined) assert.equal(typeof result.id, 'bigint');
      const batches = stats.batches - before.batches;
      t.diagnostic(`${requested.length} gets of ${distinct} ids in ${batches} statements`);
      assert.equal(stats.operations - before.operations, requested.length);
      assert.equal(stats.ids - before.ids, distinct, 'reads of one id in one batch share one slot');
      // All were requested in one turn: full batches of distinct ids, nothing more.
      assert.equal(batches, Math.ceil(distinct / MAX_READ_BATCH));
    });

    it('an id outside int64 fails alone; the reads batched with it are answered', async () => {
      await store.plants.createPlant({ id: 41n, name: 'neighbour' });
      const settled = await withinBound(
        'mixed',
        Promise.allSettled([
          store.plants.getPlant(41n),
          store.plants.getPlant(2n ** 63n),
          store.plants.getPlant(42n),
          store.plants.getPlant(-(2n ** 63n) - 1n),
        ]),
      );
      assert.deepEqual(unversioned(settled[0]), { status: 'fulfilled', value: { id: 41n, name: 'neighbour' } });
      assert.equal(settled[1]?.status, 'rejected');
      assert.ok(!((settled[1] as PromiseRejectedResult).reason instanceof StoreUnavailableError));
      assert.deepEqual(settled[2], { status: 'fulfilled', value: undefined });
      assert.equal(settled[3]?.status, 'rejected');
    });

    /**
     * Each worker creates an id and reads it the moment the create resolves, while
     * other readers keep batches of that very id in flight: a read that joined a
     * statement started before the create committed would find nothing.
     */
    async function createThenGet(creator: PostgresStore, reader: PostgresStore, base: number): Promise<void> {
      const workers = 20;
      const rounds = 25;
      let stop = false;
      const pollers = Array.from({ length: 4 }, async (_, p) => {
        while (!stop) {
          await Promise.all(
            Array.from({ length: workers }, (_, w) =>
              reader.plants.getPlant(BigInt(base + w * rounds + ((p + Date.now()) % rounds))),
            ),
          );
        }
      });
      const worker = async (w: number): Promise<void> => {
        for (let r = 0; r < rounds; r++) {
          const plant = { id: BigInt(base + w * rounds + r), name: `ryw ${w}/${r}` };
          const outcome = await creator.plants.createPlant(plant);
          assert.equal(outcome.kind, 'created');
          assert.deepEqual(
            unversioned(await reader.plants.getPlant(plant.id)),
            plant,
            `read of ${plant.id} right after its create`,
          );
          if (r % 5 === 0) {
            assert.equal((await creator.plants.deletePlant(plant.id)).kind, 'deleted');
            assert.equal(
              await reader.plants.getPlant(plant.id),
              undefined,
              `read of ${plant.id} right after its delete`,
            );
          }
        }
      };
      try {
        await withinBound('read-your-writes', Promise.all(Array.from({ length: workers }, (_, w) => worker(w))));
      } finally {
        stop = true;
        await Promise.all(pollers);
      }
    }

    it('read-your-writes: a get right after a create (or delete) resolved always sees it, with reads of the id in flight', async () => {
      await createThenGet(store, store, 100_000);
    });

    it('read-your-writes across two instances: created through one, read at once through the other', async () => {
      await createThenGet(store, other, 200_000);
      await createThenGet(other, store, 300_000);
    });
  });

  describe('over HTTP', () => {
    let h: Harness;
    before(async () => {
      h = await createHarness({ backend: postgresBackend });
    });
    after(async () => {
      await h?.close();
    });

    it('500 concurrent GET /plants/{id}: exact bodies and 404s, in far fewer statements', async (t) => {
      const ids = [...INT64_EXTREMES, ...Array.from({ length: 200 }, (_, i) => 9007199254740000n + BigInt(i))];
      for (const reply of await Promise.all(ids.map((id) => postPlant(h, `{"id": ${id}, "name": "p${id}"}`))))
        assert.equal(reply.statusCode, 200, reply.body);
      const stored = new Set(ids);
      const requested = Array.from({ length: 500 }, (_, i) =>
        i % 5 === 4 ? BigInt(-1_000_000 - i) : (ids[i % ids.length] as bigint),
      );
      const store = h.store as PostgresStore;
      const before = store.readBatchStats();
      const replies = await withinBound(
        '500 gets',
        Promise.all(
          requested.map((id) => h.request({ method: 'GET', url: `/plants/${id}`, headers: bearer(h.tokens.read) })),
        ),
      );
      replies.forEach((reply, i) => {
        const id = requested[i] as bigint;
        if (!stored.has(id)) {
          assert.equal(reply.statusCode, 404, reply.body);
          assert.equal((reply.json() as { error: number }).error, Errors.PLANT_NOT_FOUND.code);
        } else {
          assert.equal(reply.statusCode, 200, reply.body);
          assert.equal(reply.body, `{"id":${id},"name":"p${id}"}`);
        }
      });
      const stats = store.readBatchStats();
      const batches = stats.batches - before.batches;
      t.diagnostic(`500 GETs in ${batches} statements`);
      assert.equal(stats.operations - before.operations, 500);
      assert.ok(batches * 5 <= 500, `500 GETs took ${batches} statements`);
    });
  });

  describe('when the database goes away under a batch', () => {
    let schema: TestSchema;
    let proxy: TcpProxy;
    let h: Harness;
    let store: PostgresStore;
    let setup: ProxiedHarness | undefined;
    before(async () => {
      setup = await harnessBehindProxy();
      ({ schema, proxy, h, store } = setup);
    });
    after(() => setup?.close());

    it('every read of the batch in flight rejects with the same unavailable error (503 over HTTP), none hangs, then reads work again', async () => {
      assert.equal((await postPlant(h, '{"id": 1, "name": "before"}')).statusCode, 200);
      // Warm the token lookup so the GETs below reach the store before the outage.
      assert.equal(
        (await h.request({ method: 'GET', url: '/plants/1', headers: bearer(h.tokens.read) })).statusCode,
        200,
      );
      // Holds the batch inside the database: it waits on a table lock taken directly (not through the proxy).
      const locker = new pg.Client({ connectionString: schema.url });
      await locker.connect();
      try {
        await locker.query('BEGIN');
        await locker.query('LOCK TABLE plants IN ACCESS EXCLUSIVE MODE');
        const before = store.readBatchStats();
        const direct = Array.from({ length: 40 }, (_, i) => store.plants.getPlant(BigInt(1 + (i % 10))));
        const overHttp = Array.from({ length: 20 }, (_, i) =>
          h.request({ method: 'GET', url: `/plants/${1 + i}`, headers: bearer(h.tokens.read) }),
        );
        await sleep(500);
        assert.deepEqual(store.readBatchStats(), before, 'the reads are held by the lock');
        await proxy.setMode('reset');
        const settled = await withinBound('reads of a failed batch', Promise.allSettled(direct));
        const reasons = settled.map((s) => {
          assert.equal(s.status, 'rejected');
          return (s as PromiseRejectedResult).reason as unknown;
        });
        assert.ok(reasons[0] instanceof StoreUnavailableError, String(reasons[0]));
        assert.equal(new Set(reasons).size, 1, 'one batch, one error for all its reads');
        for (const reply of await withinBound('GETs of a failed batch', Promise.all(overHttp))) {
          assert.equal(reply.statusCode, 503, reply.body);
          const body = reply.json() as { error: number; message: string };
          assert.equal(body.error, Errors.STORE_UNAVAILABLE.code);
          assert.equal(typeof body.message, 'string');
        }
        assert.deepEqual(store.readBatchStats(), before, 'a failed statement is not counted as a batch');
      } finally {
        await locker.query('ROLLBACK').catch(() => {});
        await locker.end().catch(() => {});
      }
      await proxy.setMode('open');
      assert.deepEqual(unversioned(await withinBound('read after recovery', store.plants.getPlant(1n))), {
        id: 1n,
        name: 'before',
      });
    });

    it('while the server refuses connections every read rejects as unavailable, then reads work again', async () => {
      await proxy.setMode('refuse');
      const settled = await withinBound(
        'reads while refused',
        Promise.allSettled(Array.from({ length: 50 }, (_, i) => store.plants.getPlant(BigInt(i % 7)))),
      );
      for (const s of settled) {
        assert.equal(s.status, 'rejected');
        assert.ok(
          (s as PromiseRejectedResult).reason instanceof StoreUnavailableError,
          String((s as PromiseRejectedResult).reason),
        );
      }
      await proxy.setMode('open');
      const results = await withinBound(
        'reads after recovery',
        Promise.all([1n, 2n, 1n].map((id) => store.plants.getPlant(id))),
      );
      assert.deepEqual(unversioned(results), [{ id: 1n, name: 'before' }, undefined, { id: 1n, name: 'before' }]);
      const reply = await h.request({ method: 'GET', url: '/plants/1', headers: bearer(h.tokens.read) });
      assert.equal(reply.statusCode, 200, reply.body);
    });
  });

  describe('closing the store', () => {
    it('answers every read it accepted before closing, and refuses the ones after', async () => {
      const schema = await createTestSchema();
      try {
        const store = await PostgresStore.open({ url: schema.url, poolSize: 3 });
        await Promise.all(
          Array.from({ length: 100 }, (_, i) => store.plants.createPlant({ id: BigInt(i), name: `p${i}` })),
        );
        // More than one batch's worth, so some wait for a batch slot while the store closes.
        const ids = Array.from({ length: 2500 }, (_, i) => BigInt(i % 1500));
        const accepted = ids.map((id) => store.plants.getPlant(id));
        const closed = store.close();
        await assert.rejects(store.plants.getPlant(1n), StoreUnavailableError);
        const results = await withinBound('accepted reads', Promise.all(accepted));
        results.forEach((result, i) => {
          const id = ids[i] as bigint;
          assert.deepEqual(unversioned(result), id < 100n ? { id, name: `p${id}` } : undefined);
        });
        await withinBound('close', closed);
        assert.equal(store.readBatchStats().operations, 2500);
      } finally {
        await schema.drop();
      }
    });
  });
});
