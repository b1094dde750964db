/**
 * Fresh stores for the bench: created through the service's own CLI (migrations, a
 * real token), then seeded fast by one bulk INSERT straight into the database.
 * `buildDir` names the build whose CLI creates the store (by default this
 * checkout's), so that a build older than the newest migration gets a store it
 * accepts (npm run bench:ab).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { StoreName } from './options.js';
import { cli } from './processes.js';
import { findColumns } from '../src/domain/search-text.js';
import { PageCursors } from '../src/plants/page-cursor.js';
import { DEEP_PAGE, LIST_PAGE, SEED_SQL_FIND_COLUMNS, SEED_SQL_NAME, SEED_SQL_TAG } from './workload.js';

export interface PreparedStore {
  readonly store: StoreName;
  readonly databaseUrl: string;
  /** A token with plants:read and plants:write. */
  readonly token: string;
  readonly size: number;
  readonly seedMs: number;
  /** The cursor of the page DEEP_PAGE pages into the name order; undefined for a build without name order. */
  readonly deepNameCursor?: string;
  cleanup(): Promise<void>;
}

export type Prepared = PreparedStore | { readonly skipped: string };

/** Creates the (empty) store, as an operator would, then a token in it. */
async function createToken(databaseUrl: string, buildDir: string | undefined): Promise<string> {
  await cli(['migrate'], databaseUrl, buildDir);
  const out = await cli(
    ['token', 'create', '--name', 'bench', '--scopes', 'plants:read,plants:write'],
    databaseUrl,
    buildDir,
  );
  return out.trim().split('\n').pop() as string;
}

export async function prepareSqlite(size: number, buildDir?: string): Promise<PreparedStore> {
  const dir = mkdtempSync(join(tmpdir(), 'plantstore-bench-'));
  const path = join(dir, 'plantstore.db');
  const databaseUrl = `sqlite:${path}`;
  const token = await createToken(databaseUrl, buildDir);
  const started = performance.now();
  const db = new Database(path);
  const find = findColumnsSql(db.prepare("SELECT name FROM pragma_table_info('plants')").pluck().all() as string[]);
  db.exec(`
    BEGIN;
    INSERT INTO plants (id, name, tag, created_at${find.columns})
      WITH RECURSIVE seq(x) AS (SELECT 1 WHERE ${size} > 0 UNION ALL SELECT x + 1 FROM seq WHERE x < ${size})
      SELECT x, ${SEED_SQL_NAME}, ${SEED_SQL_TAG}, 0${find.values} FROM seq;
    ${searchIndexed(db) ? "INSERT INTO plants_search (plants_search) VALUES ('rebuild');" : ''}
    COMMIT;
  `);
  const seedMs = performance.now() - started;
  let deepNameCursor: string | undefined;
  if (find.columns !== '' && size > 0) {
    checkSeededFindColumns(
      db
        .prepare(
          `SELECT id, name, tag, name_key AS nameKey, name_words AS nameWords, tag_words AS tagWords FROM plants WHERE id % ${Math.max(1, Math.floor(size / 100))} = 0`,
        )
        .all() as SeededRow[],
    );
    const deep = db
      .prepare('SELECT id, name_key FROM plants ORDER BY name_key, id LIMIT 1 OFFSET ?')
      .raw()
      .get(deepOffset(size)) as [number, string];
    const secret = db.prepare("SELECT secret FROM store_secrets WHERE name = 'page-cursor'").pluck().get() as string;
    deepNameCursor = new PageCursors(secret).encode({ id: BigInt(deep[0]), key: deep[1] }, { order: 'name' });
  }
  db.close();
  return {
    store: 'sqlite',
    databaseUrl,
    token,
    size,
    seedMs,
    deepNameCursor,
    async cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Whether this build's store has a search index, which the service fills on its writes (since migration 0010, not
 * triggers): the seed fills it once, at the end. */
function searchIndexed(db: Database.Database): boolean {
  return db.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'plants_search'").get() !== undefined;
}

/** The find columns to seed (SEED_SQL_FIND_COLUMNS), if this build's store has them: ', a, b' and ', <a>, <b>'. */
function findColumnsSql(columns: readonly string[]): { columns: string; values: string } {
  const present = Object.entries(SEED_SQL_FIND_COLUMNS).filter(([column]) => columns.includes(column));
  return {
    columns: present.map(([column]) => `, ${column}`).join(''),
    values: present.map(([, value]) => `, ${value}`).join(''),
  };
}

interface SeededRow {
  readonly id: number | string;
  readonly name: string;
  readonly tag: string | null;
  readonly nameKey: string;
  readonly nameWords: string;
  readonly tagWords: string;
}

/** The SQL that seeded the find columns must agree with the service's folding, or the find cases measure a store the
 * service could not have written. */
function checkSeededFindColumns(rows: readonly SeededRow[]): void {
  for (const { id, name, tag, ...seeded } of rows) {
    const expected = findColumns(name, tag);
    if (JSON.stringify(seeded) !== JSON.stringify({ ...expected })) {
      throw new Error(
        `seeded plant ${id}: find columns ${JSON.stringify(seeded)}, the service would write ${JSON.stringify(expected)}`,
      );
    }
  }
}

/** The rank in name order of the plant before the page DEEP_PAGE pages in (the last page's, in a smaller store). */
function deepOffset(size: number): number {
  return Math.max(0, Math.min((DEEP_PAGE - 1) * LIST_PAGE, size - LIST_PAGE) - 1);
}

/** A value for a NOT NULL column the bench does not know about (e.g. created_at). */
function fillerFor(dataType: string): string | undefined {
  if (/timestamp/.test(dataType)) return 'now()';
  if (/int|numeric/.test(dataType)) return '0';
  return undefined;
}

/**
 * A fresh schema on the PostgreSQL server, named in the URL's search_path; skipped
 * (with the reason) when the server is unreachable or the service has no PostgreSQL
 * store yet.
 */
export async function preparePostgres(serverUrl: string, size: number, buildDir?: string): Promise<Prepared> {
  const admin = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 2000 });
  try {
    await admin.connect();
  } catch (error) {
    return { skipped: `PostgreSQL not reachable at ${serverUrl} (${(error as Error).message})` };
  }
  const schema = `bench_${process.pid}_${Date.now()}`;
  const cleanup = async () => {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  };
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
    const url = new URL(serverUrl);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const databaseUrl = url.toString();
    let token: string;
    try {
      token = await createToken(databaseUrl, buildDir);
    } catch (error) {
      const message = (error as Error).message;
      await cleanup();
      if (/unsupported DATABASE_URL/.test(message))
        return { skipped: 'the service has no PostgreSQL store yet (src/store/postgres)' };
      return { skipped: `the PostgreSQL store did not start: ${message}` };
    }
    const columns = await admin.query<{ column_name: string; data_type: string; needs_value: boolean }>(
      `SELECT column_name, data_type, (is_nullable = 'NO' AND column_default IS NULL) AS needs_value
         FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'plants'`,
      [schema],
    );
    if (columns.rowCount === 0) {
      await cleanup();
      return {
        skipped: `the PostgreSQL store did not create its tables in the search_path schema; set BENCH_POSTGRES_URL to a scratch database`,
      };
    }
    const find = findColumnsSql(columns.rows.map((c) => c.column_name));
    const extra = columns.rows.filter((c) => c.needs_value && !['id', 'name', 'tag'].includes(c.column_name));
    const fillers = extra.map((c) => fillerFor(c.data_type));
    if (fillers.some((f) => f === undefined)) {
      await cleanup();
      return { skipped: `cannot seed plants: unknown required columns ${extra.map((c) => c.column_name).join(', ')}` };
    }
    const started = performance.now();
    await admin.query(
      `INSERT INTO ${schema}.plants (id, name, tag${extra.map((c) => `, ${c.column_name}`).join('')}${find.columns})
       SELECT x, ${SEED_SQL_NAME}, ${SEED_SQL_TAG}${fillers.map((f) => `, ${f}`).join('')}${find.values} FROM generate_series(1, ${size}) AS x`,
    );
    // As autovacuum would leave a store after a million inserts: statistics, and a
    // visibility map for index-only scans (the count by tag uses one).
    await admin.query(`VACUUM (ANALYZE) ${schema}.plants`);
    const seedMs = performance.now() - started;
    let deepNameCursor: string | undefined;
    if (find.columns !== '' && size > 0) {
      const sample = await admin.query<SeededRow>(
        `SELECT id::text AS id, name, tag, name_key AS "nameKey", name_words AS "nameWords", tag_words AS "tagWords" FROM ${schema}.plants WHERE id % ${Math.max(1, Math.floor(size / 100))} = 0`,
      );
      checkSeededFindColumns(sample.rows);
      const deep = await admin.query<{ id: string; name_key: string }>(
        `SELECT id::text AS id, name_key FROM ${schema}.plants ORDER BY name_key, id LIMIT 1 OFFSET $1`,
        [deepOffset(size)],
      );
      const secret = await admin.query<{ secret: string }>(
        `SELECT secret FROM ${schema}.store_secrets WHERE name = 'page-cursor'`,
      );
      const [row, key] = [deep.rows[0], secret.rows[0]?.secret];
      if (row === undefined || key === undefined)
        throw new Error('the seeded store has no deep page or no cursor secret');
      deepNameCursor = new PageCursors(key).encode({ id: BigInt(row.id), key: row.name_key }, { order: 'name' });
    }
    return { store: 'postgres', databaseUrl, token, size, seedMs, deepNameCursor, cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

export function prepareStore(
  store: StoreName,
  size: number,
  postgresUrl: string,
  buildDir?: string,
): Promise<Prepared> {
  return store === 'sqlite' ? prepareSqlite(size, buildDir) : preparePostgres(postgresUrl, size, buildDir);
}
