/**
 * `npm run bench:migration`: how long the find migrations (7: the folded columns,
 * filled for every plant; 8: their indexes) take on a store that already holds
 * --plants plants (1,000,000 by default), on SQLite and on PostgreSQL. Each store is
 * made as the release before them left it (migrated to 6), seeded by one bulk
 * INSERT, then brought up to date as the service does when it starts.
 *
 * Usage: npm run bench:migration -- [--plants N] [--postgres-url URL]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { migrationsOf } from '../src/store/migrations.js';
import { migrate as migratePostgres } from '../src/store/postgres/migrator.js';
import { DEFAULT_POSTGRES_SETTINGS } from '../src/store/postgres/pool.js';
import { migrate as migrateSqlite } from '../src/store/sqlite/sqlite-store.js';
import { DEFAULT_POSTGRES_URL } from './options.js';
import { SEED_SQL_NAME, SEED_SQL_TAG } from './workload.js';

const BEFORE = 6;
const { values } = parseArgs({
  options: {
    plants: { type: 'string', default: '1000000' },
    'postgres-url': { type: 'string', default: process.env.BENCH_POSTGRES_URL ?? DEFAULT_POSTGRES_URL },
  },
});
const plants = Number(values.plants);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function sqlite(): string {
  const dir = mkdtempSync(join(tmpdir(), 'plantstore-migration-'));
  try {
    const db = new Database(join(dir, 'plantstore.db'));
    db.pragma('journal_mode = WAL');
    migrateSqlite(db, BEFORE);
    db.exec(`BEGIN; INSERT INTO plants (id, name, tag, created_at)
      WITH RECURSIVE seq(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM seq WHERE x < ${plants})
      SELECT x, ${SEED_SQL_NAME}, ${SEED_SQL_TAG}, 0 FROM seq; COMMIT;`);
    const started = performance.now();
    migrateSqlite(db);
    const took = performance.now() - started;
    db.close();
    return `sqlite: migrations 7-8 on ${plants} plants took ${seconds(took)}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgres(serverUrl: string): Promise<string> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  const schema = `migration_bench_${process.pid}`;
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
    const url = new URL(serverUrl);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const settings = { url: url.toString(), ...DEFAULT_POSTGRES_SETTINGS };
    await migratePostgres(
      settings,
      migrationsOf('postgres').filter((m) => m.version <= BEFORE),
    );
    await admin.query(
      `INSERT INTO ${schema}.plants (id, name, tag) SELECT x, ${SEED_SQL_NAME}, ${SEED_SQL_TAG} FROM generate_series(1, ${plants}) AS x`,
    );
    await admin.query(`VACUUM (ANALYZE) ${schema}.plants`);
    const started = performance.now();
    await migratePostgres(settings, migrationsOf('postgres'));
    return `postgres: migrations 7-8 on ${plants} plants took ${seconds(performance.now() - started)}`;
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}

process.stdout.write(`${sqlite()}\n`);
process.stdout.write(`${await postgres(values['postgres-url'])}\n`);
