/**
 * The tests' own schemas (test/support/postgres.ts) must never hang the suite. The
 * first schema a test process creates drops stale ones left by killed runs; a stale
 * schema still in use by a process outside this run (a service left running, a
 * transaction left open) once made that drop, and so the whole suite, wait forever.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { postgresAvailable } from '../support/backends.js';
import {
  POSTGRES_TEST_URL,
  createTestSchema,
  urlWithSchema,
  withAdminClient,
  withinBound,
} from '../support/postgres.js';

describe('test schemas', { skip: !postgresAvailable() }, () => {
  it('leaves a stale schema that another session holds a lock in, instead of waiting for it', async () => {
    // Named as a schema created two days ago would be: the prefix, the time in base 36, a pid, a random part.
    const stale = `plantstore_test_${(Date.now() - 2 * 24 * 3600 * 1000).toString(36)}_1_deadbeef`;
    await withAdminClient((client) => client.query(`CREATE SCHEMA ${stale}; CREATE TABLE ${stale}.held (id int)`));
    const holder = new pg.Client({ connectionString: urlWithSchema(POSTGRES_TEST_URL, stale) });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE held IN ACCESS SHARE MODE');
      // This file's first schema: it runs the housekeeping that drops stale schemas.
      const schema = await withinBound('creating a test schema while a stale one is in use', createTestSchema());
      await schema.drop();
      const left = await withAdminClient(
        async (client) => (await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [stale])).rowCount,
      );
      assert.equal(left, 1, 'the schema in use is left for a later run');
    } finally {
      await holder.query('ROLLBACK').catch(() => {});
      await holder.end().catch(() => {});
      await withAdminClient((client) => client.query(`DROP SCHEMA IF EXISTS ${stale} CASCADE`));
    }
  });
});
