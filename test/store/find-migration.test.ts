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
  const found = async (q: string) =>
    pageRecords((await store.plants.listPlantsPage({ limit: 100, terms: searchTerms(q) })).json).map((p) => p.id);
  assert.deepEqual(await found('edel'), [-9223372036854775808n]);
  assert.deepEqual(await found('alpine'), [-9223372036854775808n, 20n]);
  assert.deepEqual(await found('cafe'), [20n, 9007199254740993n]);
  assert.deepEqual(await found('ete'), [9007199254740993n]);
  const byName = pageRecords((await store.plants.listPlantsPage({ limit: 30_000, order: 'name' })).json)
    .map((p) => p.name)
    .filter((name) => !name.startsWith('bulk '));
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

    it("fills them in chunks, in the migration's transaction", async () => {
      schema = await createTestSchema();
      const url = schema.url;
      await migratePostgres(
        { url, ...DEFAULT_POSTGRES_SETTINGS },
        migrationsOf('postgres').filter((m) => m.version <= 6),
      );
      await withAdminClient(async (client) => {
        for (const [id, name, tag] of OLD_PLANTS)
          await client.query('INSERT INTO plants (id, name, tag) VALUES ($1, $2, $3)', [id.toString(), name, tag]);
        // More than one chunk of the data step, so its keyset walk is exercised too.
        await client.query(
          `INSERT INTO plants (id, name) SELECT 1000 + x, 'bulk ' || x FROM generate_series(1, 25000) AS x`,
        );
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

/**
 * Migrations 13 (SQLite) and 12 (PostgreSQL) on stores whose plants were folded the
 * way releases before them folded (lower case first, then the decomposition, which
 * left "™" as "TM" and "ℌ" as "H"): their columns are folded again, and the SQLite
 * search index follows, so old plants are found and ordered as new ones are.
 */
function foldedBefore(text: string): string {
  return text.toLowerCase().normalize('NFKD').replace(/\p{M}/gu, '');
}
function wordsBefore(text: string | null): string {
  return text === null
    ? ''
    : [
        ...new Set(
          foldedBefore(text)
            .split(/[^\p{L}\p{N}]+/u)
            .filter((w) => w !== ''),
        ),
      ].join(' ');
}
const FOLDED_BEFORE: [bigint, string, string | null][] = [
  [1n, 'Zen™ Bonsai', null],
  [2n, 'ℌoya carnosa', 'ℌanging'],
  [3n, '𝐁egonia rex', null],
  [4n, 'Hoya kerrii', 'hanging'],
  [5n, 'Aloe vera', null],
];

async function assertRefolded(store: Store): Promise<void> {
  const found = async (q: string) =>
    pageRecords((await store.plants.listPlantsPage({ limit: 100, terms: searchTerms(q), order: 'name' })).json).map(
      (p) => p.id,
    );
  assert.deepEqual(await found('zentm'), [1n]);
  assert.deepEqual(await found('ho'), [2n, 4n]);
  assert.deepEqual(await found('hanging'), [2n, 4n]);
  assert.deepEqual(await found('begonia'), [3n]);
  const byName = pageRecords((await store.plants.listPlantsPage({ limit: 100, order: 'name' })).json).map((p) => p.id);
  assert.deepEqual(byName, [5n, 3n, 2n, 4n, 1n]);
}

describe('find columns folded again onto plants folded the old way', () => {
  it('SQLite (13)', async () => {
    const path = join(tempDir(), 'plantstore.db');
    const db = new Database(path);
    migrateSqlite(db, 12);
    const insert = db.prepare(
      'INSERT INTO plants (id, name, tag, created_at, name_key, name_words, tag_words) VALUES (?, ?, ?, 0, ?, ?, ?)',
    );
    const index = db.prepare('INSERT INTO plants_search (rowid, name_words, tag_words) VALUES (?, ?, ?)');
    for (const [id, name, tag] of FOLDED_BEFORE) {
      insert.run(id, name, tag, foldedBefore(name), wordsBefore(name), wordsBefore(tag));
      index.run(id, wordsBefore(name), wordsBefore(tag));
    }
    db.close();
    const store = SqliteStore.open({ path });
    try {
      await assertRefolded(store);
    } finally {
      await store.close();
    }
    const reopened = new Database(path);
    try {
      // The index holds exactly the rows' words: FTS5's own check of an external-content index (it throws if not).
      reopened.exec("INSERT INTO plants_search (plants_search, rank) VALUES ('integrity-check', 1)");
      assert.equal(
        reopened.prepare("SELECT count(*) FROM plants_search WHERE plants_search MATCH 'zentm'").pluck().get(),
        1,
      );
      assert.equal(
        reopened.prepare("SELECT count(*) FROM plants_search WHERE plants_search MATCH 'hoya'").pluck().get(),
        2,
      );
    } finally {
      reopened.close();
    }
  });

  describe('PostgreSQL (13)', { skip: !postgresAvailable() }, () => {
    let schema: TestSchema | undefined;
    after(() => schema?.drop());

    it('in its data step', async () => {
      schema = await createTestSchema();
      const url = schema.url;
      await migratePostgres(
        { url, ...DEFAULT_POSTGRES_SETTINGS },
        migrationsOf('postgres').filter((m) => m.version <= 11),
      );
      await withAdminClient(async (client) => {
        for (const [id, name, tag] of FOLDED_BEFORE) {
          await client.query(
            'INSERT INTO plants (id, name, tag, name_key, name_words, tag_words) VALUES ($1, $2, $3, $4, $5, $6)',
            [id.toString(), name, tag, foldedBefore(name), wordsBefore(name), wordsBefore(tag)],
          );
        }
      }, url);
      const store = await PostgresStore.open({ url });
      try {
        await assertRefolded(store);
      } finally {
        await store.close();
      }
    });
  });
});
