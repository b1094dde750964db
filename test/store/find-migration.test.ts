/**
 * Migrations 7 and 8 on stores that already hold plants (as a release before them
 * left them): every existing plant gets its name key and words, folded by the same
 * code as new writes (SQLite: SQL functions of the migrating connection; PostgreSQL:
 * the data step, in chunks), so search and name order find old and new plants alike.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { searchTerms } from '../../src/domain/search-text.js';
import { migrationsOf } from '../../src/store/migrations.js';
import { migrate as migratePostgres } from '../../src/store/postgres/migrator.js';
import { DEFAULT_POSTGRES_SETTINGS } from '../../src/store/postgres/pool.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { migrate as migrateSqlite, SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/types.js';
import { postgresAvailable } from '../support/backends.js';
import { pageRecords } from '../support/pages.js';
import { createTestSchema, withAdminClient, type TestSchema } from '../support/postgres.js';
import { tempDir } from '../support/temp.js';

const OLD_PLANTS: [bigint, string, string | null][] = [
  [-9223372036854775808n, 'Édelweiss', 'Alpine'],
  [3n, 'Monstera deliciosa', null],
  [9007199254740993n, 'cafe', 'été'],
  [12n, 'ZZ plant', 'houseplant'],
];

async function assertFindsOldAndNew(store: Store): Promise<void> {
  assert.equal((await store.plants.createPlant({ id: 20n, name: 'Café noir', tag: 'Alpine' })).kind, 'created');
  const found = async (q: string) => pageRecords((await store.plants.listPlantsPage({ limit: 100, terms: searchTerms(q) })).json).map((p) => p.id);
  assert.deepEqual(await found('edel'), [-9223372036854775808n]);
  assert.deepEqual(await found('alpine'), [-9223372036854775808n, 20n]);
  assert.deepEqual(await found('cafe'), [20n, 9007199254740993n]);
  assert.deepEqual(await found('ete'), [9007199254740993n]);
  const byName = pageRecords((await store.plants.listPlantsPage({ limit: 30_000, order: 'name' })).json).map((p) => p.name).filter((name) => !name.startsWith('bulk '));
  assert.deepEqual(byName, ['cafe', 'Café noir', 'Édelweiss', 'Monstera deliciosa', 'ZZ plant']);
}

describe('find columns migrated onto existing plants', () => {
  it('SQLite', async () => {
    const path = join(tempDir(), 'plantstore.db');
    const db = new Database(path);
    migrateSqlite(db, 6);
    const insert = db.prepare('INSERT INTO plants (id, name, tag, created_at) VALUES (?, ?, ?, 0)');
    for (const plant of OLD_PLANTS) insert.run(...plant);
    db.close();
    const store = SqliteStore.open({ path });
    try {
      await assertFindsOldAndNew(store);
    } finally {
      await store.close();
    }
  });

  describe('PostgreSQL', { skip: !postgresAvailable() }, () => {
    let schema: TestSchema | undefined;
    after(() => schema?.drop());

    it('fills them in chunks, in the migration\'s transaction', async () => {
      schema = await createTestSchema();
      const url = schema.url;
      await migratePostgres({ url, ...DEFAULT_POSTGRES_SETTINGS }, migrationsOf('postgres').filter((m) => m.version <= 6));
      await withAdminClient(async (client) => {
        for (const [id, name, tag] of OLD_PLANTS) await client.query('INSERT INTO plants (id, name, tag) VALUES ($1, $2, $3)', [id.toString(), name, tag]);
        // More than one chunk of the data step, so its keyset walk is exercised too.
        await client.query(`INSERT INTO plants (id, name) SELECT 1000 + x, 'bulk ' || x FROM generate_series(1, 25000) AS x`);
      }, url);
      const store = await PostgresStore.open({ url });
      try {
        await assertFindsOldAndNew(store);
        const bulk = await store.plants.countPlants({ terms: ['bulk'] }, 'exact');
        assert.deepEqual(bulk, { count: 25000, exact: true }, 'every chunk was filled');
      } finally {
        await store.close();
      }
    });
  });
});
