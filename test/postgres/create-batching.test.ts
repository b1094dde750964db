/**
 * Group commit for creates on PostgreSQL (src/store/postgres/create-batcher.ts), on
 * the real server: concurrent creates share batch statements, and batching changes
 * nothing a client can see (every row once, one webhook event per created plant,
 * replay/conflict exact, int64 ids exact, outages 503, no hang, no deadlock).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { Errors } from '../../src/http/errors.js';
import { StoreUnavailableError } from '../../src/store/errors.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { CreatePlantOutcome, PlantRecord } from '../../src/store/types.js';
import { postgresAvailable, type TestBackend } from '../support/backends.js';
import { bearer, createHarness, json, postPlant, type Harness } from '../support/harness.js';
import {
  adminRows,
  createTestSchema,
  type TestSchema,
  twoInstancesOnNewSchema,
  withinBound,
} from '../support/postgres.js';
import { harnessBehindProxy, type ProxiedHarness } from '../support/postgres-harness.js';
import type { TcpProxy } from '../support/tcp-proxy.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { unversioned } from '../support/assertions.js';

const kinds = (outcomes: readonly CreatePlantOutcome[]) => outcomes.map((o) => o.kind).sort();

describe('PostgreSQL creates go in batches', { skip: !postgresAvailable() }, () => {
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

    it('500 concurrent creates share a few statements, and each row is stored once', async (t) => {
      const before = store.createBatchStats();
      const plants = Array.from({ length: 500 }, (_, i): PlantRecord => ({
        id: BigInt(1_000 + i),
        name: `plant ${i}`,
        tag: i % 2 === 0 ? 'even' : undefined,
      }));
      const outcomes = await withinBound('500 creates', Promise.all(plants.map((p) => store.plants.createPlant(p))));
      assert.ok(outcomes.every((o) => o.kind === 'created'));
      const stats = store.createBatchStats();
      assert.equal(stats.operations - before.operations, 500);
      t.diagnostic(`500 creates in ${stats.batches - before.batches} statements`);
      assert.ok(stats.batches - before.batches <= 5, `500 creates took ${stats.batches - before.batches} statements`);
      const rows = await adminRows<{ count: string; distinct: string }>(
        schema.url,
        'SELECT count(*) AS count, count(DISTINCT id) AS distinct FROM plants WHERE id BETWEEN 1000 AND 1499',
      );
      assert.deepEqual(rows[0], { count: '500', distinct: '500' });
      for (const plant of [plants[0], plants[1], plants[499]] as PlantRecord[]) {
        assert.deepEqual(
          unversioned(await store.plants.getPlant(plant.id)),
          plant.tag === undefined ? { id: plant.id, name: plant.name } : plant,
        );
      }
    });

    it('two creates of one id submitted together, same body: one created, one replayed', async () => {
      const plant = { id: 7n, name: 'Fern', tag: 'green' };
      const outcomes = await Promise.all([store.plants.createPlant(plant), store.plants.createPlant({ ...plant })]);
      assert.deepEqual(kinds(outcomes), ['created', 'replayed']);
      assert.deepEqual(unversioned(outcomes[1]), { kind: 'replayed', plant });
    });

    it('two creates of one id submitted together, different bodies: the first is created, the second conflicts', async () => {
      const first = { id: 8n, name: 'Fern' };
      const second = { id: 8n, name: 'Cactus' };
      const outcomes = await Promise.all([store.plants.createPlant(first), store.plants.createPlant(second)]);
      assert.deepEqual(unversioned(outcomes), [
        { kind: 'created', plant: first },
        { kind: 'conflict', existing: first },
      ]);
      assert.deepEqual(unversioned(await store.plants.getPlant(8n)), first);
    });

    it('many creates of a few ids in one burst: each id created once, the rest replayed or conflicting, in arrival order', async () => {
      const ids = [20n, 21n, 22n];
      const submitted = Array.from({ length: 30 }, (_, i) => {
        const id = ids[i % 3] as bigint;
        return { id, name: i < 3 || i % 2 === 0 ? `plant ${id}` : `other ${i}` };
      });
      const outcomes = await withinBound('burst', Promise.all(submitted.map((p) => store.plants.createPlant(p))));
      outcomes.forEach((outcome, i) => {
        const plant = submitted[i] as PlantRecord;
        const expected = i < 3 ? 'created' : plant.name === `plant ${plant.id}` ? 'replayed' : 'conflict';
        assert.equal(outcome.kind, expected, `create #${i} of ${plant.id}`);
      });
      const rows = await adminRows<{ count: string }>(
        schema.url,
        'SELECT count(*) AS count FROM plants WHERE id = ANY($1::int8[])',
        [ids.map(String)],
      );
      assert.equal(rows[0]?.count, '3');
    });

    it('ids at the int64 limits and around 2^53 survive exactly, in one batch', async () => {
      const extremes = [
        -9223372036854775808n,
        -9223372036854775807n,
        9223372036854775807n,
        9223372036854775806n,
        9007199254740991n,
        9007199254740992n,
        9007199254740993n,
        -9007199254740993n,
        0n,
        -1n,
      ];
      const outcomes = await Promise.all(extremes.map((id) => store.plants.createPlant({ id, name: `n${id}` })));
      assert.ok(outcomes.every((o) => o.kind === 'created'));
      const rows = await adminRows<{ id: string; name: string }>(
        schema.url,
        'SELECT id::text AS id, name FROM plants WHERE id = ANY($1::int8[]) ORDER BY plants.id',
        [extremes.map(String)],
      );
      assert.deepEqual(
        rows.map((r) => [r.id, r.name]),
        [...extremes].sort((a, b) => (a < b ? -1 : 1)).map((id) => [String(id), `n${id}`]),
      );
      for (const id of extremes) assert.deepEqual(unversioned(await store.plants.getPlant(id)), { id, name: `n${id}` });
      // Replays find the stored rows by the same exact ids.
      const again = await Promise.all(extremes.map((id) => store.plants.createPlant({ id, name: `n${id}` })));
      assert.ok(again.every((o) => o.kind === 'replayed'));
    });

    it('a create the database refuses for its data fails alone; the creates batched with it are committed', async () => {
      const good = Array.from({ length: 20 }, (_, i) => ({ id: BigInt(5_000 + i), name: `good ${i}` }));
      // A NUL character: HTTP validation keeps it out, PostgreSQL text cannot hold it (SQLSTATE 22021).
      const bad = { id: 5_010_000n, name: 'bad \u0000 name' };
      const settled = await withinBound(
        'mixed batch',
        Promise.allSettled([...good, bad].map((p) => store.plants.createPlant(p))),
      );
      const failed = settled.pop();
      assert.equal(failed?.status, 'rejected');
      assert.ok(
        !((failed as PromiseRejectedResult).reason instanceof StoreUnavailableError),
        'a data error is not an outage',
      );
      assert.ok(settled.every((s) => s.status === 'fulfilled' && s.value.kind === 'created'));
      const rows = await adminRows<{ count: string }>(
        schema.url,
        'SELECT count(*) AS count FROM plants WHERE id BETWEEN 5000 AND 5010000',
      );
      assert.equal(rows[0]?.count, '20');
    });
  });

  describe('webhook events follow the subscriptions another instance makes', () => {
    let instances: Awaited<ReturnType<typeof twoInstancesOnNewSchema>>;
    let schema: TestSchema;
    let store: PostgresStore;
    let other: PostgresStore;
    before(async () => {
      instances = await twoInstancesOnNewSchema(2);
      ({ schema, store, other } = instances);
    });
    after(() => instances?.close());

    const createAll = (from: number, count: number) =>
      withinBound(
        `${count} creates`,
        Promise.all(
          Array.from({ length: count }, (_, i) =>
            store.plants.createPlant({ id: BigInt(from + i), name: `plant ${from + i}` }),
          ),
        ),
      );
    const eventCount = async (from: number, to: number) =>
      Number(
        (
          await adminRows<{ n: string }>(
            schema.url,
            "SELECT count(*) AS n FROM webhook_events WHERE (payload::json ->> 'id')::int8 BETWEEN $1 AND $2",
            [from, to],
          )
        )[0]?.n,
      );

    // Batches first go out without events (nobody subscribes), and must fall back to
    // writing them the moment a subscription exists, even one this store never saw made.
    it('no event without a subscription; one per created plant from the first batch after another instance subscribes; none after it unsubscribes', async () => {
      assert.ok((await createAll(1, 50)).every((o) => o.kind === 'created'));
      assert.equal(await eventCount(1, 50), 0);

      await other.webhooks.insertSubscription({
        id: 'whk_other',
        url: 'https://example.com/hooks',
        secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        eventTypes: ['plant.created'],
        createdAt: new Date(),
      });
      const outcomes = await createAll(101, 50);
      assert.ok(outcomes.every((o) => o.kind === 'created'));
      assert.equal(await eventCount(101, 150), 50);
      // Replays and conflicts write no event, with or without subscribers.
      await createAll(101, 10);
      assert.equal(await eventCount(101, 150), 50);

      assert.equal(await other.webhooks.deleteSubscription('whk_other'), true);
      assert.ok((await createAll(201, 50)).every((o) => o.kind === 'created'));
      assert.equal(await eventCount(201, 250), 0);
      const rows = await adminRows<{ n: string }>(schema.url, 'SELECT count(*) AS n FROM plants');
      assert.equal(rows[0]?.n, '150');
    });
  });

  describe('over HTTP, with a webhook subscription', () => {
    // 500 requests at once wait for the pool's few connections; on a busy machine that can outlast the default
    // wait for a free connection (which answers 503), and this test is about batching, not that bound.
    const patientPostgres: TestBackend = {
      name: 'postgres',
      async open() {
        const schema = await createTestSchema();
        const store = await PostgresStore.open({ url: schema.url, poolSize: 5, connectTimeoutMs: 30_000 });
        return {
          store,
          databaseUrl: schema.url,
          async cleanup() {
            await store.close();
            await schema.drop();
          },
        };
      },
    };
    let h: Harness;
    let receiver: Receiver;
    before(async () => {
      receiver = await startReceiver();
      h = await createHarness({
        backend: patientPostgres,
        env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_POLL_INTERVAL_MS: '50' },
      });
    });
    after(async () => {
      await h?.close();
      await receiver?.close();
    });

    it('500 concurrent POST /plants: 200 each, far fewer statements, each row once, one outbox event and delivery per plant', async (t) => {
      const subscribed = await h.request({
        method: 'POST',
        url: '/webhooks',
        headers: { ...json, ...bearer(h.tokens.admin) },
        payload: JSON.stringify({ url: receiver.url }),
      });
      assert.equal(subscribed.statusCode, 201, subscribed.body);
      const store = h.store as PostgresStore;
      const before = store.createBatchStats();
      const ids = Array.from({ length: 500 }, (_, i) => 9007199254740000n + BigInt(i) * 3n);
      const replies = await withinBound(
        '500 requests',
        Promise.all(ids.map((id) => postPlant(h, `{"id": ${id}, "name": "plant ${id}"}`))),
      );
      for (const reply of replies) assert.equal(reply.statusCode, 200, reply.body);
      const stats = store.createBatchStats();
      assert.equal(stats.operations - before.operations, 500);
      t.diagnostic(`500 requests in ${stats.batches - before.batches} statements`);
      assert.ok(
        (stats.batches - before.batches) * 5 <= 500,
        `500 creates took ${stats.batches - before.batches} statements`,
      );

      const plants = await adminRows<{ id: string }>(h.databaseUrl, 'SELECT id::text AS id FROM plants ORDER BY id');
      assert.deepEqual(
        plants.map((r) => r.id),
        ids.map(String),
      );
      const events = await adminRows<{ payload: string; deliveries: string }>(
        h.databaseUrl,
        'SELECT e.payload, (SELECT count(*) FROM webhook_deliveries d WHERE d.event_id = e.id) AS deliveries FROM webhook_events e',
      );
      assert.equal(events.length, 500, 'one event per created plant');
      assert.ok(
        events.every((e) => e.deliveries === '1'),
        'one delivery per event and subscription',
      );
      assert.deepEqual(
        events.map((e) => e.payload).sort(),
        ids.map((id) => `{"id":${id},"name":"plant ${id}"}`).sort(),
      );

      // Replays and conflicts write no event.
      const replay = await postPlant(h, `{"id": ${ids[0]}, "name": "plant ${ids[0]}"}`);
      const conflict = await postPlant(h, `{"id": ${ids[1]}, "name": "someone else"}`);
      assert.deepEqual([replay.statusCode, conflict.statusCode], [200, 409]);
      assert.equal(
        (await adminRows<{ count: string }>(h.databaseUrl, 'SELECT count(*) AS count FROM webhook_events'))[0]?.count,
        '500',
      );
    });

    it('two POSTs of one id at once: same body 200 + 200, different bodies one 200 and one 409', async () => {
      const same = await Promise.all([
        postPlant(h, '{"id": -42, "name": "Ivy"}'),
        postPlant(h, '{"id": -42, "name": "Ivy"}'),
      ]);
      assert.deepEqual(
        same.map((r) => r.statusCode),
        [200, 200],
      );
      assert.deepEqual(
        same.map((r) => r.body),
        ['{"name":"Ivy"}', '{"name":"Ivy"}'],
      );
      const different = await Promise.all([
        postPlant(h, '{"id": -43, "name": "Ivy"}'),
        postPlant(h, '{"id": -43, "name": "Oak"}'),
      ]);
      assert.deepEqual(different.map((r) => r.statusCode).sort(), [200, 409]);
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

    it('every create in the batch in flight gets 503 with the Error record, none hangs, and each can be retried safely', async () => {
      assert.equal((await postPlant(h, '{"id": 1, "name": "before"}')).statusCode, 200);
      // Holds the batch inside the database: it waits on a table lock taken directly (not through the proxy).
      const locker = new pg.Client({ connectionString: schema.url });
      await locker.connect();
      try {
        await locker.query('BEGIN');
        await locker.query('LOCK TABLE plants IN ACCESS EXCLUSIVE MODE');
        const before = store.createBatchStats();
        const inFlight = Array.from({ length: 50 }, (_, i) => postPlant(h, `{"id": ${100 + i}, "name": "lost ${i}"}`));
        await sleep(500);
        await proxy.setMode('reset');
        const replies = await withinBound('creates of a failed batch', Promise.all(inFlight));
        for (const reply of replies) {
          assert.equal(reply.statusCode, 503, reply.body);
          const body = reply.json() as { error: number; message: string };
          assert.equal(body.error, Errors.STORE_UNAVAILABLE.code);
          assert.equal(typeof body.message, 'string');
        }
        assert.deepEqual(store.createBatchStats(), before, 'a failed statement is not counted as a batch');
        await locker.query('ROLLBACK');
        await proxy.setMode('open');
        // Whether the statement committed is unknown to the clients (the server may still
        // finish it once the lock is gone); a retry is safe either way: created or replayed.
        const retried = await withinBound(
          'retries',
          Promise.all(Array.from({ length: 50 }, (_, i) => postPlant(h, `{"id": ${100 + i}, "name": "lost ${i}"}`))),
        );
        for (const reply of retried) assert.equal(reply.statusCode, 200, reply.body);
        const written = await adminRows<{ count: string }>(
          schema.url,
          'SELECT count(*) AS count FROM plants WHERE id >= 100',
        );
        assert.equal(written[0]?.count, '50');
      } finally {
        await locker.end().catch(() => {});
      }
    });

    it('while the server refuses connections every create rejects as unavailable, then creates work again', async () => {
      await proxy.setMode('refuse');
      const settled = await withinBound(
        'creates while refused',
        Promise.allSettled(
          Array.from({ length: 50 }, (_, i) => store.plants.createPlant({ id: BigInt(200 + i), name: 'refused' })),
        ),
      );
      for (const s of settled) {
        assert.equal(s.status, 'rejected');
        assert.ok(
          (s as PromiseRejectedResult).reason instanceof StoreUnavailableError,
          String((s as PromiseRejectedResult).reason),
        );
      }
      await proxy.setMode('open');
      const outcomes = await withinBound(
        'creates after recovery',
        Promise.all([2n, 3n, 4n].map((id) => store.plants.createPlant({ id, name: 'back' }))),
      );
      assert.deepEqual(kinds(outcomes), ['created', 'created', 'created']);
      assert.equal(
        (await postPlant(h, '{"id": 1, "name": "before"}')).statusCode,
        200,
        'the acknowledged plant is still there',
      );
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
    });
    after(async () => {
      for (const store of stores ?? []) await store.close();
      await schema?.drop();
    });

    async function race(round: number, creators: readonly PostgresStore[]): Promise<void> {
      const ids = Array.from({ length: 200 }, (_, i) => BigInt(round * 1_000 + i));
      const ascending = ids.map((id) => ({ id, name: `plant ${id}` }));
      const descending = [...ascending].reverse();
      const [first, second] = creators as [PostgresStore, PostgresStore];
      const outcomes = await withinBound(
        `round ${round}`,
        Promise.all([
          ...ascending.map((p) => first.plants.createPlant(p)),
          ...descending.map((p) => second.plants.createPlant(p)),
        ]),
      );
      const counts = { created: 0, replayed: 0, conflict: 0 };
      for (const outcome of outcomes) counts[outcome.kind]++;
      assert.deepEqual(counts, { created: 200, replayed: 200, conflict: 0 }, `round ${round}`);
      const rows = await adminRows<{ count: string }>(
        schema.url,
        'SELECT count(*) AS count FROM plants WHERE id BETWEEN $1 AND $2',
        [round * 1_000, round * 1_000 + 999],
      );
      assert.equal(rows[0]?.count, '200');
    }

    it('two instances creating the same 200 ids in opposite orders: every create resolves, exactly 200 rows (no deadlock)', async () => {
      for (let round = 1; round <= 5; round++) await race(round, stores);
    });

    it('one instance, two tasks creating the same 200 ids in opposite orders: the same', async () => {
      const one = stores[0] as PostgresStore;
      for (let round = 11; round <= 13; round++) await race(round, [one, one]);
    });
  });

  describe('closing the store', () => {
    it('commits every create it accepted before closing, and refuses the ones after', async () => {
      const schema = await createTestSchema();
      try {
        const store = await PostgresStore.open({ url: schema.url, poolSize: 3 });
        const accepted = Array.from({ length: 300 }, (_, i) =>
          store.plants.createPlant({ id: BigInt(i), name: `p${i}` }),
        );
        const closed = store.close();
        const refused = store.plants.createPlant({ id: 1_000n, name: 'late' });
        await assert.rejects(refused, StoreUnavailableError);
        const outcomes = await withinBound('accepted creates', Promise.all(accepted));
        assert.ok(outcomes.every((o) => o.kind === 'created'));
        await withinBound('close', closed);
        const rows = await adminRows<{ count: string }>(schema.url, 'SELECT count(*) AS count FROM plants');
        assert.equal(rows[0]?.count, '300');
      } finally {
        await schema.drop();
      }
    });
  });
});
