/**
 * The PostgreSQL page query (src/store/postgres/plant-page.ts) must stay an index
 * range scan at any cursor, with no sort: asking whether a later plant exists with
 * EXISTS once made the planner read the table sequentially from the start, up to the
 * cursor, on every page (GET /plants fell to 2,000 req/s on 10,000 plants); building
 * each plant's JSON inside the scan made it read and sort the whole table for the
 * first page. EXPLAIN shows both.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { countStatement, pageStatement } from '../../src/store/postgres/plant-page.js';
import type { ListPlantsQuery } from '../../src/store/types.js';
import { postgresAvailable } from '../support/backends.js';
import { createTestSchema, planNodeTypes, withAdminClient, type TestSchema } from '../support/postgres.js';

describe('PostgreSQL page query plan', { skip: !postgresAvailable() }, () => {
  let schema: TestSchema;
  before(async () => {
    schema = await createTestSchema();
    const store = await PostgresStore.open({ url: schema.url });
    await store.close();
    await withAdminClient(async (client) => {
      // Names as the service would fold them (src/domain/search-text.ts): 'plant 17' has the key 'plant 17' and the
      // words 'plant 17'.
      await client.query(`INSERT INTO plants (id, name, tag, created_at, name_key, name_words, tag_words)
        SELECT x, 'plant ' || x, tag, now(), 'plant ' || x, 'plant ' || x, coalesce(tag, '')
        FROM generate_series(1, 20000) AS x, LATERAL (SELECT CASE WHEN x % 100 = 0 THEN 'rare' WHEN x % 2 = 1 THEN 'green' END AS tag) AS t`);
      await client.query('ANALYZE plants');
    }, schema.url);
  });
  after(() => schema?.drop());

  const queries: ListPlantsQuery[] = [
    { limit: 100 },
    { limit: 100, after: 19_000n },
    { limit: 100, tags: ['green'] },
    { limit: 100, tags: ['green'], after: 19_000n },
    { limit: 100, order: '-id', after: 19_000n },
    { limit: 100, order: 'name' },
    { limit: 100, order: 'name', after: 15_000n, afterKey: 'plant 15000' },
    { limit: 100, order: '-name', after: 15_000n, afterKey: 'plant 15000' },
    { limit: 100, order: 'name', tags: ['green'], after: 15_001n, afterKey: 'plant 15001' },
  ];
  for (const query of queries) {
    it(`never scans the plants table sequentially, never sorts: ${JSON.stringify(query, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`, async () => {
      const { text, values } = pageStatement(query);
      const types = await planNodeTypes(text, values, schema.url);
      assert.ok(!types.includes('Seq Scan on plants'), types.join(' > '));
      // The rows come in index order; nothing sorts them again (an aggregate's
      // ORDER BY did, on PostgreSQL 15).
      assert.ok(!types.includes('Sort'), types.join(' > '));
      if (query.order === 'name' || query.order === '-name')
        assert.ok(
          types.some((type) => type.includes('using plants_name_key')),
          types.join(' > '),
        );
    });
  }

  it("searches through the GIN index of the plants' words, never scanning the table", async () => {
    for (const query of [
      { limit: 100, terms: ['plant', '1234'] },
      { limit: 100, terms: ['1999'], order: '-id' as const, after: 20_000n },
      { limit: 100, terms: ['123'] },
      { limit: 100, terms: ['12'], order: 'name' as const },
    ]) {
      const { text, values } = pageStatement(query);
      const types = await planNodeTypes(text, values, schema.url);
      assert.ok(types.includes('Bitmap Index Scan using plants_search'), types.join(' > '));
      assert.ok(!types.includes('Seq Scan on plants'), types.join(' > '));
      // Never an ordered walk that tests every plant (the whole table for a search matching little):
      // the matches are sorted. (In name order the primary key reads the last plant's key.)
      assert.ok(types.includes('Sort'), types.join(' > '));
      if (query.order !== 'name')
        assert.ok(!types.some((type) => /^Index Scan using plants_pkey/.test(type)), types.join(' > '));
    }
  });

  it("answers count=estimated from the planner's statistics for a large set, and counts a small one exactly", async () => {
    const store = await PostgresStore.open({ url: schema.url });
    try {
      const all = await store.plants.countPlants({}, 'estimated');
      assert.equal(all.exact, false);
      assert.ok(Math.abs(all.count - 20_000) <= 2_000, `estimate ${all.count} for 20,000 plants`);
      assert.deepEqual(await store.plants.countPlants({}, 'exact'), { count: 20_000, exact: true });
      assert.deepEqual(await store.plants.countPlants({ tags: ['rare'] }, 'estimated'), { count: 200, exact: true });
    } finally {
      await store.close();
    }
  });

  it('counts a tag from its index, and a search from the GIN index', async () => {
    const tag = countStatement({ tags: ['rare'] });
    const tagTypes = await planNodeTypes(tag.text, tag.values, schema.url);
    assert.ok(
      tagTypes.some((type) => / using plants_tag_id/.test(type)),
      tagTypes.join(' > '),
    );
    assert.ok(!tagTypes.includes('Seq Scan on plants'), tagTypes.join(' > '));
    const search = countStatement({ terms: ['1234'] });
    const searchTypes = await planNodeTypes(search.text, search.values, schema.url);
    assert.ok(searchTypes.includes('Bitmap Index Scan using plants_search'), searchTypes.join(' > '));
  });
});
