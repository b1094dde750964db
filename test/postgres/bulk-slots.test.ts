/**
 * Imports and exports hold a pool connection each while they run, so at most half
 * the pool serves them at once: one more is refused as the store being busy (503,
 * to retry), and a finished one gives its slot back, however it ended.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StoreUnavailableError } from '../../src/store/errors.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { PlantImport, Store } from '../../src/store/types.js';
import { postgresAvailable, postgresBackend } from '../support/backends.js';
import { bearer, createHarness } from '../support/harness.js';
import { createTestSchema } from '../support/postgres.js';

/** Begins imports until the store refuses one; returns those it began. */
async function takeEverySlot(store: Store): Promise<PlantImport[]> {
  const held: PlantImport[] = [];
  for (;;) {
    try {
      held.push(await store.plants.beginImport());
    } catch (error) {
      assert.ok(error instanceof StoreUnavailableError, String(error));
      return held;
    }
  }
}

describe('imports and exports on PostgreSQL take at most half the pool', { skip: !postgresAvailable() }, () => {
  it('refuses one more than half the pool, and frees the slot when an import or export ends', async () => {
    const schema = await createTestSchema();
    const store = await PostgresStore.open({ url: schema.url, poolSize: 4 });
    const held: PlantImport[] = [];
    try {
      const seed = await store.plants.beginImport();
      await seed.stage(Array.from({ length: 3000 }, (_, i) => ({ line: i + 1, id: BigInt(i), name: `plant ${i}`, tag: null })));
      assert.equal((await seed.apply('all', 10)).kind, 'applied');
      held.push(...(await takeEverySlot(store)));
      assert.equal(held.length, 2, 'half of a pool of 4');
      await assert.rejects(store.plants.exportPlants({})[Symbol.asyncIterator]().next(), StoreUnavailableError);
      await held.shift()?.abort();
      const exporting = store.plants.exportPlants({})[Symbol.asyncIterator]();
      assert.equal((await exporting.next()).value?.length, 2000);
      await assert.rejects(store.plants.beginImport(), StoreUnavailableError, 'the export holds the freed slot');
      await exporting.return?.(undefined);
      held.push(await store.plants.beginImport());
      // Ordinary requests still have the rest of the pool meanwhile.
      assert.equal((await store.plants.getPlant(1n))?.name, 'plant 1');
    } finally {
      await Promise.all(held.map((one) => one.abort()));
      await store.close();
      await schema.drop();
    }
  });

  it('answers an import past the limit with 503 and Retry-After', async () => {
    const h = await createHarness({ backend: postgresBackend });
    const held = await takeEverySlot(h.store);
    try {
      const response = await h.request({ method: 'POST', url: '/plants/import', headers: { 'content-type': 'application/x-ndjson', ...bearer(h.tokens.write) }, payload: '{"id":1,"name":"x"}' });
      assert.equal(response.statusCode, 503, response.body);
      assert.ok(response.headers['retry-after'] !== undefined);
    } finally {
      await Promise.all(held.map((one) => one.abort()));
      await h.close();
    }
  });
});
