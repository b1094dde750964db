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
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  PLANT_CONTENT_KEYS,
  PLANT_KEYS,
  PLANT_TEXT_RULES,
  samePlant,
  valuesOf,
  type PlantRecord,
} from '../../src/domain/plant.js';
import { MAX_LINE_BYTES } from '../../src/plants/bulk/lines.js';
import { PLANT_POSTGRES_TYPES, PLANT_SQLITE_TYPES } from '../../src/domain/plant-sql.js';
import { wordsColumnsSql } from '../../src/domain/plant-find-sql.js';
import { FIND_ROW_COLUMNS, WORDS_COLUMNS } from '../../src/domain/search-text.js';
import { migrate as migrateSqlite } from '../../src/store/sqlite/sqlite-store.js';
import { migrate as migratePostgres } from '../../src/store/postgres/migrator.js';
import { migrationsOf } from '../../src/store/migrations.js';
import { applyRoutines, POSTGRES_ROUTINES } from '../../src/store/postgres/routines.js';
import { DEFAULT_POSTGRES_SETTINGS } from '../../src/store/postgres/pool.js';
import { postgresAvailable } from '../support/backends.js';
import { tempDir } from '../support/temp.js';
import { createTestSchema, withAdminClient, type TestSchema } from '../support/postgres.js';

const AWKWARD = 'quote " backslash \\ ünïcödé 🌱 \u2028 </script> \u00a0';

const PLANTS: readonly PlantRecord[] = [
  { id: -9223372036854775808n, name: 'Min' },
  { id: 9223372036854775807n, name: AWKWARD, tag: AWKWARD },
  { id: 0n, name: 'Fern', tag: 'shade' },
  { id: 42n, name: '"', tag: '\\' },
];

/** A plant's values as statement parameters, in PLANT_KEYS order (the id as decimal text). */
const asParameters = (plant: PlantRecord) => {
  const values = valuesOf(plant);
  return PLANT_KEYS.map((key) => (key === 'id' ? values.id.toString() : values[key]));
};

/** The plant's columns as a one-row SELECT of parameters, each cast to its type. */
const parameterRow = (dialect: 'sqlite' | 'postgres'): string =>
  PLANT_KEYS.map((key, i) =>
    dialect === 'postgres'
      ? `$${i + 1}::${PLANT_POSTGRES_TYPES[key]} AS ${key}`
      : `CAST(? AS ${PLANT_SQLITE_TYPES[key]}) AS ${key}`,
  ).join(', ');

describe('the plant definition', () => {
  it('samePlant compares every content field', () => {
    assert.ok(samePlant({ id: 1n, name: 'a' }, { id: 1n, name: 'a' }));
    assert.ok(!samePlant({ id: 1n, name: 'a' }, { id: 1n, name: 'a', tag: 't' }));
    assert.ok(!samePlant({ id: 1n, name: 'a', tag: 't' }, { id: 1n, name: 'b', tag: 't' }));
  });

  it('SQLite builds the JSON text plantJson writes', () => {
    const db = new Database(':memory:');
    const select = db
      .prepare(`SELECT ${plantJsonSql('sqlite', 'p')} FROM (SELECT ${parameterRow('sqlite')}) AS p`)
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
    assert.ok(table.includes(`GENERATED ALWAYS AS (\n    ${plantJsonSql('sqlite')}\n  ) STORED`), table);
    db.close();
  });

  it("a SQLite store whose json column is not the definition's is rebuilt with it, its rows and indexes kept", () => {
    const path = join(tempDir(), 'older.db');
    const open = (): Database.Database => new Database(path);
    let db = open();
    migrateSqlite(db);
    const table = () => db.prepare("SELECT sql FROM sqlite_schema WHERE name = 'plants'").pluck().get() as string;
    const others = () =>
      db
        .prepare("SELECT name, sql FROM sqlite_schema WHERE tbl_name = 'plants' AND type <> 'table' ORDER BY name")
        .all();
    const current = table();
    const indexes = others();
    // As a store is after a migration that added a field: its column is there, the expression lacks it (here the tag).
    db.unsafeMode(true);
    db.pragma('writable_schema = ON');
    db.prepare("UPDATE sqlite_schema SET sql = ? WHERE name = 'plants'").run(
      current.replace(plantJsonSql('sqlite'), `'{"id":' || id || ',"name":' || json_quote(name) || '}'`),
    );
    db.pragma('writable_schema = OFF');
    db.close();
    db = open();
    const insert = db.prepare('INSERT INTO plants (id, name, tag, created_at) VALUES (?, ?, ?, 0)');
    insert.run(7n, 'Fern', 'shade');
    insert.run(-1n, 'Moss', null);
    assert.equal(db.prepare('SELECT json FROM plants WHERE id = 7').pluck().get(), '{"id":7,"name":"Fern"}');
    migrateSqlite(db);
    assert.equal(
      table().replace('CREATE TABLE "plants"', 'CREATE TABLE plants'),
      current.replace('CREATE TABLE "plants"', 'CREATE TABLE plants'),
    );
    assert.deepEqual(others(), indexes);
    assert.deepEqual(db.prepare('SELECT json FROM plants ORDER BY id').pluck().all(), [
      plantJson({ id: -1n, name: 'Moss' }),
      plantJson({ id: 7n, name: 'Fern', tag: 'shade' }),
    ]);
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
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
            `SELECT ${plantJsonSql('postgres', 'p')} AS json FROM (SELECT ${parameterRow('postgres')}) AS p`,
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

describe("text naming the plant's fields", () => {
  const sourceFiles = (dir: string): string[] =>
    readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts'))
      .map((file) => join(dir, file));
  const src = fileURLToPath(new URL('../../src/', import.meta.url));
  // Where the fields are defined and said; and the data steps of released migrations, which fill the columns those
  // migrations knew (a released step never changes).
  const EXEMPT = new Set(['domain/plant.ts', 'domain/plant-words.ts', 'store/postgres/data-steps.ts']);
  const field = `(?:${PLANT_CONTENT_KEYS.join('|')})`;
  const HAND_LISTS = [
    // "name or tag", "names and tags", "name, tag and color"
    new RegExp(`\\b${field}s?(?:, ${field}s?)* (?:or|and) ${field}s?\\b`, 'gi'),
    // id,name,tag (a CSV header), [id, name, tag] (a row)
    new RegExp(`\\bid, ?${field}, ?${field}\\b`, 'g'),
    // {"id","name"} (JSON members)
    new RegExp(`"id", ?"${field}"`, 'g'),
  ];
  /** Whether `line` names two different fields (or the id and a field) in a list. */
  const listsFields = (line: string): boolean =>
    HAND_LISTS.some((pattern) =>
      [...line.matchAll(pattern)].some(([list = '']) => {
        const named = new Set(list.match(new RegExp(`\\b(?:id|${field})(?=s?\\b)`, 'gi')) ?? []);
        return named.size >= 2;
      }),
    );

  it('comes from the definition: no file in src/ lists the fields by hand', () => {
    const found: string[] = [];
    for (const file of sourceFiles(src)) {
      const name = relative(src, file).replaceAll('\\', '/');
      if (EXEMPT.has(name)) continue;
      for (const [i, line] of readFileSync(file, 'utf8').split('\n').entries()) {
        if (listsFields(line)) found.push(`src/${name}:${i + 1}: ${line.trim()}`);
      }
    }
    assert.deepEqual(
      found,
      [],
      "say the fields through src/domain/plant-words.ts (or loop over the definition's keys)",
    );
  });

  it('the longest valid import line is far below MAX_LINE_BYTES', () => {
    // Every field at its longest, each character 4 bytes in UTF-8 and quoted: what lines.ts promises it is above.
    const longest = PLANT_CONTENT_KEYS.reduce((bytes, key) => bytes + 4 * PLANT_TEXT_RULES[key].maxLength + 16, 64);
    assert.ok(longest * 2 < MAX_LINE_BYTES, `${longest} bytes`);
  });
});
