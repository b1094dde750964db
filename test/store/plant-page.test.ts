/**
 * listPlantsPage on both stores: the database writes the page's JSON itself, so
 * these check its bytes (compact, ids exact, no tag key for NULL, strings escaped
 * as JSON) and its cursor (lastId, hasMore) at the edges where off-by-ones live.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parse } from 'lossless-json';
import { testBackends } from '../support/backends.js';
import { createHarness, type Harness } from '../support/harness.js';
import type { PlantRecord } from '../../src/store/types.js';
import { listed } from '../support/pages.js';

const MIN_INT64 = -9223372036854775808n;
const MAX_INT64 = 9223372036854775807n;

/** Parses a page exactly: ids as bigint, through lossless-json. */
function records(json: string): PlantRecord[] {
  const parsed = parse(json, undefined, (value) => BigInt(value)) as { id: bigint; name: string; tag?: string }[];
  return parsed.map((p) => (p.tag === undefined ? { id: p.id, name: p.name } : { id: p.id, name: p.name, tag: p.tag }));
}

for (const backend of testBackends())
  describe(`store.plants.listPlantsPage [${backend.name}]`, () => {
    let h: Harness;
    const awkward = 'quote " backslash \\ slash / tab-free ünïcödé 🌱 \u2028 <script>';
    before(async () => {
      h = await createHarness({ backend });
      const plants: PlantRecord[] = [
        { id: MIN_INT64, name: 'min', tag: 'edge' },
        { id: -9007199254740993n, name: 'below -2^53' },
        { id: 1n, name: awkward, tag: awkward },
        { id: 2n, name: 'two', tag: 'edge' },
        { id: 9007199254740993n, name: 'above 2^53', tag: 'edge' },
        { id: MAX_INT64, name: 'max' },
      ];
      for (const plant of plants) assert.equal((await h.store.plants.createPlant(plant)).kind, 'created');
    });
    after(() => h.close());

    it('writes compact JSON with exact ids and no tag key when there is none', async () => {
      const page = await h.store.plants.listPlantsPage({ limit: 2, after: 9007199254740992n });
      assert.equal(
        page.json,
        '[{"id":9007199254740993,"name":"above 2^53","tag":"edge"},{"id":9223372036854775807,"name":"max"}]',
      );
      assert.equal(page.lastId, MAX_INT64);
      assert.equal(page.hasMore, false);
    });

    it('escapes names and tags as JSON strings that parse back to the stored text', async () => {
      const page = await h.store.plants.listPlantsPage({ limit: 1, after: 0n });
      assert.deepEqual(records(page.json), [{ id: 1n, name: awkward, tag: awkward }]);
      assert.deepEqual(JSON.parse(page.json), [{ id: 1, name: awkward, tag: awkward }]);
    });

    it('returns the same plants, in the same order, as listPlants', async () => {
      for (const query of [
        { limit: 100 },
        { limit: 3 },
        { limit: 3, after: -1n },
        { limit: 100, tags: ['edge'] },
        { limit: 1, tags: ['edge'], after: MIN_INT64 },
      ]) {
        const page = await h.store.plants.listPlantsPage(query);
        assert.deepEqual(
          records(page.json),
          await listed(h.store, query),
          JSON.stringify(query, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v)),
        );
      }
    });

    it('says more follow exactly when a later plant exists', async () => {
      const full = await h.store.plants.listPlantsPage({ limit: 5 });
      assert.equal(full.lastId, 9007199254740993n);
      assert.equal(full.hasMore, true, 'a sixth plant exists');
      const all = await h.store.plants.listPlantsPage({ limit: 6 });
      assert.equal(all.lastId, MAX_INT64);
      assert.equal(all.hasMore, false, 'exactly a full page, nothing after it');
      const tagged = await h.store.plants.listPlantsPage({ limit: 2, tags: ['edge'] });
      assert.deepEqual([tagged.lastId, tagged.hasMore], [2n, true]);
      const lastTagged = await h.store.plants.listPlantsPage({ limit: 1, tags: ['edge'], after: 2n });
      assert.deepEqual(
        [lastTagged.lastId, lastTagged.hasMore],
        [9007199254740993n, false],
        'MAX_INT64 follows but has no tag',
      );
    });

    it('returns an empty array, no cursor and no next page past the end or for an unknown tag', async () => {
      for (const query of [
        { limit: 10, after: MAX_INT64 },
        { limit: 10, tags: ['nothing has this tag'] },
      ]) {
        const page = await h.store.plants.listPlantsPage(query);
        assert.deepEqual(page, { json: '[]', lastId: undefined, hasMore: false });
      }
    });
  });
