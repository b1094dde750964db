/**
 * Applies pending migrations, safely when several instances start at once: one transaction that first takes
 * an advisory lock, so a second instance waits and then finds nothing to do, and a failure rolls everything
 * back (DDL is transactional). The lock key comes from the schema, so separate schemas (parallel test runs)
 * do not wait for each other. The same transaction then installs the trigger functions (routines.ts).
 * Its connection has no statement timeout: a migration may take longer than a request may. The lock is a
 * transaction's, so migrations work through a pooler in transaction mode too.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { migrationsOf, pendingMigrations, type Migration } from '../migrations.js';
import { POSTGRES_DATA_STEPS } from './data-steps.js';
import { applyRoutines } from './routines.js';
import { newClient, type PostgresConnectionSettings } from './pool.js';

/** "PLNT": the first half of every advisory lock key this service takes. */
const LOCK_CLASS = 0x504c4e54;

export class MigrationError extends Error {}

/** The two int4 halves of the advisory lock that serialises migrations of `schema`. */
export function migrationLockKey(schema: string): readonly [number, number] {
  return [LOCK_CLASS, createHash('sha256').update(`migrate:${schema}`).digest().readInt32BE(0)];
}

async function applyPending(client: pg.Client, migrations: readonly Migration[]): Promise<number[]> {
  const encoding = (await client.query<{ server_encoding: string }>('SHOW server_encoding')).rows[0]?.server_encoding;
  if (encoding !== 'UTF8') {
    // A plant's text is Unicode; any other server encoding would reject or mangle some.
    throw new MigrationError(`the database must use UTF8 encoding (it uses ${encoding ?? 'an unknown encoding'})`);
  }
  const schema =
    (await client.query<{ schema: string | null }>('SELECT current_schema() AS schema')).rows[0]?.schema ?? null;
  if (schema === null) {
    throw new MigrationError(
      'no schema to create tables in: the search_path names no existing schema (create it, or fix options=-c search_path=... in DATABASE_URL)',
    );
  }
  await client.query('SELECT pg_advisory_xact_lock($1, $2)', [...migrationLockKey(schema)]);
  // Only created when missing, so an instance can start (and serve reads, not ready)
  // on an up-to-date database that is read-only, e.g. a standby mid-failover.
  const table = `${pg.escapeIdentifier(schema)}.schema_migrations`;
  const { rows } = await client.query<{ found: boolean }>('SELECT to_regclass($1) IS NOT NULL AS found', [table]);
  if (rows[0]?.found !== true) {
    await client.query(
      `CREATE TABLE ${table} (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
  }
  const applied = new Set(
    (await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version),
  );
  const newlyApplied: number[] = [];
  for (const migration of pendingMigrations(migrations, applied, `in schema ${schema}`)) {
    await client.query(migration.sql);
    await POSTGRES_DATA_STEPS.get(migration.version)?.(client);
    await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
      migration.version,
      migration.name,
    ]);
    newlyApplied.push(migration.version);
  }
  // The trigger functions (routines.ts) are written against the latest schema: a store migrated only part of
  // the way (a test's list of migrations) gets them once it has every one.
  const done = new Set([...applied, ...newlyApplied]);
  if (migrationsOf('postgres').every((migration) => done.has(migration.version))) await applyRoutines(client);
  return newlyApplied;
}

/** Brings the schema up to date; returns the versions this call applied (empty when none were pending). */
export async function migrate(
  settings: PostgresConnectionSettings,
  migrations: readonly Migration[],
): Promise<number[]> {
  const client = newClient(settings);
  // A connection that breaks mid-migration rejects the query in flight; this only
  // keeps the 'error' event from crashing the process.
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('BEGIN');
    try {
      const applied = await applyPending(client, migrations);
      await client.query('COMMIT');
      return applied;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    }
  } finally {
    await client.end().catch(() => {});
  }
}
