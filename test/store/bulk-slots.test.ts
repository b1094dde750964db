/**
 * Imports and exports hold resources while they run (on PostgreSQL a pool
 * connection; on SQLite an export's own connection and snapshot, an import's temp
 * table), so a store runs only so many at once: one more is refused as the store
 * being busy (503, to retry), and a finished one gives its slot back, however it
 * ended. PostgreSQL runs half its pool; SQLite four.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bulkSlotsFor } from '../../src/store/core/bulk-slots.js';
import { StoreUnavailableError } from '../../src/store/errors.js';
import type { PlantImport, Store } from '../../src/store/types.js';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness } from '../support/harness.js';
import { importRow, numberedImportRows } from '../support/plant-rows.js';

/** Begins imports until the store refuses one (or 50 began: it has no limit); returns those it began. */
async function takeEverySlot(store: Store): Promise<PlantImport[]> {
  const held: PlantImport[] = [];
  while (held.length < 50) {
    try {
      held.push(await store.plants.beginImport());
    } catch (error) {
      assert.ok(error instanceof StoreUnavailableError, String(error));
      return held;
    }
  }
  return held;
}

for (const backend of testBackends())
  describe(`imports and exports at once [${backend.name}]`, () => {
    // The test PostgreSQL stores have a pool of 5 (support/backends.ts).
    const slots = backend.name === 'sqlite' ? 4 : bulkSlotsFor(5);

    it(`refuses one more than ${slots}, and frees the slot when an import or export ends`, async () => {
      const { store, cleanup } = await backend.open();
      const held: PlantImport[] = [];
      try {
        const seed = await store.plants.beginImport();
        await seed.stage(numberedImportRows(0, 3000));
        assert.equal((await seed.apply('all', 10)).kind, 'applied');
        held.push(...(await takeEverySlot(store)));
        assert.equal(held.length, slots);
        await assert.rejects(store.plants.exportPlants({})[Symbol.asyncIterator]().next(), StoreUnavailableError);
        await held.shift()?.abort();
        const exporting = store.plants.exportPlants({})[Symbol.asyncIterator]();
        const first = (await exporting.next()).value ?? [];
        assert.ok(
          first.length > 0 && first.length < 3000,
          `an export under way: its first chunk has ${first.length} of the 3000 plants`,
        );
        await assert.rejects(store.plants.beginImport(), StoreUnavailableError, 'the export holds the freed slot');
        await exporting.return?.(undefined);
        held.push(await store.plants.beginImport());
        // An applied import frees its slot too.
        const applied = held.pop() as PlantImport;
        await applied.stage([importRow(1, { id: 5000n, name: 'applied' })]);
        assert.equal((await applied.apply('all', 10)).kind, 'applied');
        held.push(await store.plants.beginImport());
        // Ordinary requests are served meanwhile.
        assert.equal((await store.plants.getPlant(1n))?.name, 'plant 1');
      } finally {
        await Promise.all(held.map((one) => one.abort()));
        await cleanup();
      }
    });

    it('answers an import past the limit with 503 and Retry-After', async () => {
      const h = await createHarness({ backend });
      const held = await takeEverySlot(h.store);
      try {
        const response = await h.request({
          method: 'POST',
          url: '/plants/import',
          headers: { 'content-type': 'application/x-ndjson', ...bearer(h.tokens.write) },
          payload: '{"id":1,"name":"x"}',
        });
        assert.equal(response.statusCode, 503, response.body);
        assert.ok(response.headers['retry-after'] !== undefined);
      } finally {
        await Promise.all(held.map((one) => one.abort()));
        await h.close();
      }
    });
  });
