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
import { SEED_SQL_NAME, SEED_SQL_TAG } from './workload.js';

export interface PreparedStore {
  readonly store: StoreName;
  readonly databaseUrl: string;
  /** A token with plants:read and plants:write. */
  readonly token: string;
  readonly size: number;
  readonly seedMs: number;
  cleanup(): Promise<void>;
}

export type Prepared = PreparedStore | { readonly skipped: string };

/** Creates the (empty) store, as an operator would, then a token in it. */
async function createToken(databaseUrl: string, buildDir: string | undefined): Promise<string> {
  await cli(['migrate'], databaseUrl, buildDir);
  const out = await cli(['token', 'create', '--name', 'bench', '--scopes', 'plants:read,plants:write'], databaseUrl, buildDir);
  return out.trim().split('\n').pop() as string;
}

export async function prepareSqlite(size: number, buildDir?: string): Promise<PreparedStore> {
  const dir = mkdtempSync(join(tmpdir(), 'plantstore-bench-'));
  const path = join(dir, 'plantstore.db');
  const databaseUrl = `sqlite:${path}`;
  const token = await createToken(databaseUrl, buildDir);
  const started = performance.now();
  const db = new Database(path);
  db.exec(`
    BEGIN;
    INSERT INTO plants (id, name, tag, created_at)
      WITH RECURSIVE seq(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM seq WHERE x < ${size})
      SELECT x, ${SEED_SQL_NAME}, ${SEED_SQL_TAG}, 0 FROM seq;
    COMMIT;
  `);
  db.close();
  return {
    store: 'sqlite',
    databaseUrl,
    token,
    size,
    seedMs: performance.now() - started,
    async cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
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
      if (/unsupported DATABASE_URL/.test(message)) return { skipped: 'the service has no PostgreSQL store yet (src/store/postgres)' };
      return { skipped: `the PostgreSQL store did not start: ${message}` };
    }
    const columns = await admin.query<{ column_name: string; data_type: string; needs_value: boolean }>(
      `SELECT column_name, data_type, (is_nullable = 'NO' AND column_default IS NULL) AS needs_value
         FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'plants'`,
      [schema],
    );
    if (columns.rowCount === 0) {
      await cleanup();
      return { skipped: `the PostgreSQL store did not create its tables in the search_path schema; set BENCH_POSTGRES_URL to a scratch database` };
    }
    const extra = columns.rows.filter((c) => c.needs_value && !['id', 'name', 'tag'].includes(c.column_name));
    const fillers = extra.map((c) => fillerFor(c.data_type));
    if (fillers.some((f) => f === undefined)) {
      await cleanup();
      return { skipped: `cannot seed plants: unknown required columns ${extra.map((c) => c.column_name).join(', ')}` };
    }
    const started = performance.now();
    await admin.query(
      `INSERT INTO ${schema}.plants (id, name, tag${extra.map((c) => `, ${c.column_name}`).join('')})
       SELECT x, ${SEED_SQL_NAME}, ${SEED_SQL_TAG}${fillers.map((f) => `, ${f}`).join('')} FROM generate_series(1, ${size}) AS x`,
    );
    await admin.query(`ANALYZE ${schema}.plants`);
    return { store: 'postgres', databaseUrl, token, size, seedMs: performance.now() - started, cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

export function prepareStore(store: StoreName, size: number, postgresUrl: string, buildDir?: string): Promise<Prepared> {
  return store === 'sqlite' ? prepareSqlite(size, buildDir) : preparePostgres(postgresUrl, size, buildDir);
}
