/**
 * The plant's one definition (src/domain/plant*.ts) and what is generated from it:
 * the JSON text each store builds in SQL is byte for byte plantJson's, the SQLite
 * store's json column is the definition's expression, and the PostgreSQL change-log
 * function is the one routines.ts defines, installed by the migrator and kept; each store's migrations made the
 * find columns (name key, words of each searched field) that the statements name from the definition.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { plantJson, plantJsonSql } from '../../src/domain/plant-json.js';
import { samePlant, type PlantRecord } from '../../src/domain/plant.js';
import { wordsColumnsSql } from '../../src/domain/plant-find-sql.js';
import { FIND_ROW_COLUMNS, WORDS_COLUMNS } from '../../src/domain/search-text.js';
import { migrate as migrateSqlite } from '../../src/store/sqlite/sqlite-store.js';
import { migrate as migratePostgres } from '../../src/store/postgres/migrator.js';
import { migrationsOf } from '../../src/store/migrations.js';
import { applyRoutines, POSTGRES_ROUTINES } from '../../src/store/postgres/routines.js';
import { DEFAULT_POSTGRES_SETTINGS } from '../../src/store/postgres/pool.js';
import { postgresAvailable } from '../support/backends.js';
import { createTestSchema, withAdminClient, type TestSchema } from '../support/postgres.js';

const AWKWARD = 'quote " backslash \\ ünïcödé 🌱 \u2028 </script> \u00a0';

const PLANTS: readonly PlantRecord[] = [
  { id: -9223372036854775808n, name: 'Min' },
  { id: 9223372036854775807n, name: AWKWARD, tag: AWKWARD },
  { id: 0n, name: 'Fern', tag: 'shade' },
  { id: 42n, name: '"', tag: '\\' },
];

const asParameters = (plant: PlantRecord) => [plant.id.toString(), plant.name, plant.tag ?? null];

describe('the plant definition', () => {
  it('samePlant compares every content field', () => {
    assert.ok(samePlant({ id: 1n, name: 'a' }, { id: 1n, name: 'a' }));
    assert.ok(!samePlant({ id: 1n, name: 'a' }, { id: 1n, name: 'a', tag: 't' }));
    assert.ok(!samePlant({ id: 1n, name: 'a', tag: 't' }, { id: 1n, name: 'b', tag: 't' }));
  });

  it('SQLite builds the JSON text plantJson writes', () => {
    const db = new Database(':memory:');
    const select = db
      .prepare(`SELECT ${plantJsonSql('sqlite', 'p')} FROM (SELECT CAST(? AS INTEGER) AS id, ? AS name, ? AS tag) AS p`)
      .pluck();
    for (const plant of PLANTS) assert.equal(select.get(asParameters(plant)), plantJson(plant));
    db.close();
  });

  it("a migrated SQLite store's json column is the definition's expression", () => {
    const db = new Database(':memory:');
    migrateSqlite(db);
    const table = db
      .prepare("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'plants'")
      .pluck()
      .get() as string;
    // The generated column cannot be changed in place: a new field needs a migration that rebuilds the table.
    assert.ok(table.includes(`GENERATED ALWAYS AS (\n    ${plantJsonSql('sqlite')}\n  ) STORED`), table);
    db.close();
  });

  it("a migrated SQLite store has the definition's find columns and searches the words of each searched field", () => {
    const db = new Database(':memory:');
    migrateSqlite(db);
    const columns = (table: string) =>
      db.prepare(`SELECT name FROM pragma_table_info('${table}')`).pluck().all() as string[];
    for (const column of FIND_ROW_COLUMNS) assert.ok(columns('plants').includes(column), column);
    // A field added to SEARCHED_PLANT_KEYS needs a migration that rebuilds plants_search with its column.
    assert.deepEqual(columns('plants_search'), WORDS_COLUMNS);
    db.close();
  });

  describe('on PostgreSQL', { skip: !postgresAvailable() }, () => {
    const schemas: TestSchema[] = [];
    after(async () => {
      for (const schema of schemas) await schema.drop();
    });

    it('builds the JSON text plantJson writes', async () => {
      await withAdminClient(async (client) => {
        for (const plant of PLANTS) {
          const { rows } = await client.query<{ json: string }>(
            `SELECT ${plantJsonSql('postgres', 'p')} AS json FROM (SELECT $1::int8 AS id, $2::text AS name, $3::text AS tag) AS p`,
            asParameters(plant),
          );
          assert.equal(rows[0]?.json, plantJson(plant));
        }
      });
    });

    it("a migrated store has the definition's find columns, and its search index is on the words the search reads", async () => {
      const schema = await createTestSchema();
      schemas.push(schema);
      await migratePostgres({ url: schema.url, ...DEFAULT_POSTGRES_SETTINGS }, migrationsOf('postgres'));
      await withAdminClient(async (client) => {
        const { rows } = await client.query<{ column_name: string }>(
          "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'plants'",
        );
        const columns = rows.map((row) => row.column_name);
        for (const column of FIND_ROW_COLUMNS) assert.ok(columns.includes(column), column);
        // plant-page.ts searches plant_search_vector(<the words columns>): the index must be on that very call.
        const index = await client.query<{ definition: string }>(
          "SELECT pg_get_indexdef(to_regclass('plants_search')) AS definition",
        );
        assert.match(index.rows[0]?.definition ?? '', new RegExp(`plant_search_vector\\(${wordsColumnsSql()}\\)`));
      }, schema.url);
    });

    it("the migrator installs the routines' bodies, keeps them, and restores one that differs", async () => {
      const schema = await createTestSchema();
      schemas.push(schema);
      await migratePostgres({ url: schema.url, ...DEFAULT_POSTGRES_SETTINGS }, migrationsOf('postgres'));
      await withAdminClient(async (client) => {
        const body = async () =>
          (
            await client.query<{ body: string }>(
              "SELECT prosrc AS body FROM pg_proc WHERE oid = to_regprocedure('plant_changes_log()')",
            )
          ).rows[0]?.body;
        assert.equal(await body(), POSTGRES_ROUTINES[0]?.body);
        assert.deepEqual(await applyRoutines(client), [], 'an up-to-date store is only read');
        // The body migration 0012 installed, as a store has it before its first migrate by this code.
        const released = migrationsOf('postgres').find((m) => m.version === 12)?.sql ?? '';
        await client.query(released.slice(released.indexOf('CREATE OR REPLACE FUNCTION')));
        assert.notEqual(await body(), POSTGRES_ROUTINES[0]?.body);
        assert.deepEqual(await applyRoutines(client), ['plant_changes_log()']);
        assert.equal(await body(), POSTGRES_ROUTINES[0]?.body);
      }, schema.url);
    });
  });
});
