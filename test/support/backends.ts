/**
 * The store backends the API contract suite runs against. Every API test file
 * loops over `testBackends()`, so each behaviour is proven on every store.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/types.js';
import {
  announceSkipOnce,
  createTestSchema,
  POSTGRES_TEST_URL,
  postgresUnreachableReason,
  redactUrl,
} from './postgres.js';
import { startPgBouncer } from './pgbouncer.js';
import { tempDir } from './temp.js';

export interface OpenedTestStore {
  readonly store: Store;
  /** The DATABASE_URL naming this store (for child processes and the CLI). */
  readonly databaseUrl: string;
  /** Removes everything the test store created (files, schema). */
  cleanup(): Promise<void>;
}

export interface TestBackend {
  readonly name: 'sqlite' | 'postgres';
  /** A fresh, empty, migrated store that no other test shares. */
  open(): Promise<OpenedTestStore>;
}

export const sqliteBackend: TestBackend = {
  name: 'sqlite',
  async open() {
    const dir = tempDir();
    const path = join(dir, 'plantstore.db');
    const store = SqliteStore.open({ path });
    return {
      store,
      databaseUrl: `sqlite:${path}`,
      async cleanup() {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

/**
 * PLANTSTORE_TEST_PGBOUNCER=1: every PostgreSQL store of the backend suites is opened through a PgBouncer of its
 * own in transaction mode (DATABASE_POOLER=transaction), its change log LISTENing on the direct URL.
 */
const throughPgBouncer = process.env.PLANTSTORE_TEST_PGBOUNCER === '1';

/** Each open() gets a fresh schema of its own in the test database, dropped by cleanup(). */
export const postgresBackend: TestBackend = {
  name: 'postgres',
  async open() {
    const schema = await createTestSchema();
    const pooler = throughPgBouncer ? await startPgBouncer(schema.name) : undefined;
    try {
      // A small pool that lets idle connections go soon: many stores open in one run.
      const store = await PostgresStore.open({
        url: pooler?.url ?? schema.url,
        poolSize: 5,
        idleTimeoutMs: 1000,
        ...(pooler === undefined ? {} : { pooler: 'transaction', listenUrl: schema.url }),
      });
      return {
        store,
        // Child processes and the CLI reach the same store directly.
        databaseUrl: schema.url,
        async cleanup() {
          await store.close();
          await pooler?.stop();
          await schema.drop();
        },
      };
    } catch (error) {
      await pooler?.stop();
      await schema.drop().catch(() => {});
      throw error;
    }
  },
};

// Asked once per test file (each runs in its own process), before any test is declared.
const postgresUnreachable = await postgresUnreachableReason();

/** True when PLANTSTORE_REQUIRE_POSTGRES=1 (set by .ci/run): the PostgreSQL suite must not be skipped. */
export const postgresRequired = process.env.PLANTSTORE_REQUIRE_POSTGRES === '1';

/**
 * PostgreSQL when its server is reachable. Unreachable, it is skipped with one loud
 * line per run, unless PLANTSTORE_REQUIRE_POSTGRES=1, when it is an error.
 */
export function postgresAvailable(): boolean {
  if (postgresUnreachable === undefined) return true;
  const where = redactUrl(POSTGRES_TEST_URL);
  if (postgresRequired) {
    throw new Error(
      `PostgreSQL at ${where} is unreachable (${postgresUnreachable}) and PLANTSTORE_REQUIRE_POSTGRES=1: the PostgreSQL suite must run`,
    );
  }
  announceSkipOnce(
    `!!! PostgreSQL at ${where} unreachable (${postgresUnreachable}): skipping the PostgreSQL suite. ` +
      'Start it, or set PLANTSTORE_TEST_DATABASE_URL.',
  );
  return false;
}

export function testBackends(): TestBackend[] {
  // Through PgBouncer the run is about PostgreSQL: the SQLite half is the plain run's.
  if (throughPgBouncer) return postgresAvailable() ? [postgresBackend] : [];
  return postgresAvailable() ? [sqliteBackend, postgresBackend] : [sqliteBackend];
}
