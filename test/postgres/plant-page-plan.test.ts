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
import { pageStatement } from '../../src/store/postgres/plant-page.js';
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
      await client.query(`INSERT INTO plants (id, name, tag, created_at)
        SELECT x, 'plant ' || x, CASE WHEN x % 2 = 1 THEN 'green' END, now() FROM generate_series(1, 20000) AS x`);
      await client.query('ANALYZE plants');
    }, schema.url);
  });
  after(() => schema?.drop());

  const queries: ListPlantsQuery[] = [
    { limit: 100 },
    { limit: 100, after: 19_000n },
    { limit: 100, tags: ['green'] },
    { limit: 100, tags: ['green'], after: 19_000n },
  ];
  for (const query of queries) {
    it(`never scans the plants table sequentially, never sorts: ${JSON.stringify(query, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`, async () => {
      const { text, values } = pageStatement(query);
      const types = await planNodeTypes(text, values, schema.url);
      assert.ok(!types.includes('Seq Scan on plants'), types.join(' > '));
      // The rows come in index order; nothing sorts them again (an aggregate's
      // ORDER BY did, on PostgreSQL 15).
      assert.ok(!types.includes('Sort'), types.join(' > '));
    });
  }
});
