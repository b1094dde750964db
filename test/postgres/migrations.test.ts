/**
 * PostgreSQL migrations: applied at open and by `plantstore migrate`, each exactly
 * once even when many instances start together, all or nothing, and serialised per
 * schema by an advisory lock.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { migrate, migrationLockKey, MigrationError } from '../../src/store/postgres/migrator.js';
import { migrationsOf, type Migration } from '../../src/store/migrations.js';
import { DEFAULT_POSTGRES_SETTINGS, type PostgresConnectionSettings } from '../../src/store/postgres/pool.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { postgresAvailable } from '../support/backends.js';
import {
  createTestSchema,
  POSTGRES_TEST_URL,
  urlWithSchema,
  withAdminClient,
  type TestSchema,
} from '../support/postgres.js';
import { runCli } from '../support/service-process.js';
import { unversioned } from '../support/assertions.js';

const postgresMigrations = migrationsOf('postgres');
const LATEST = postgresMigrations.at(-1)?.version ?? 0;

describe('PostgreSQL migrations', { skip: !postgresAvailable() }, () => {
  const schemas: TestSchema[] = [];
  const freshSchema = async () => {
    const schema = await createTestSchema();
    schemas.push(schema);
    return schema;
  };
  after(async () => {
    for (const schema of schemas) await schema.drop();
  });

  const settings = (url: string): PostgresConnectionSettings => ({ url, ...DEFAULT_POSTGRES_SETTINGS });
  const appliedVersions = (schema: TestSchema) =>
    withAdminClient(
      async (c) =>
        (await c.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).rows.map(
          (r) => r.version,
        ),
      schema.url,
    );
  const tableExists = (schema: TestSchema, table: string) =>
    withAdminClient(
      async (c) =>
        (await c.query<{ found: string | null }>('SELECT to_regclass($1)::text AS found', [table])).rows[0]?.found !==
        null,
      schema.url,
    );

  it('10 instances opening one empty schema at once all succeed, and each migration is applied once', async () => {
    const schema = await freshSchema();
    const stores = await Promise.all(
      Array.from({ length: 10 }, () => PostgresStore.open({ url: schema.url, poolSize: 1 })),
    );
    try {
      assert.deepEqual(
        await appliedVersions(schema),
        postgresMigrations.map((m) => m.version),
      );
      await Promise.all(stores.map((s) => s.ping()));
      assert.equal((await stores[0]!.plants.createPlant({ id: 1n, name: 'one' })).kind, 'created');
      assert.deepEqual(unversioned(await stores[9]!.plants.getPlant(1n)), { id: 1n, name: 'one' });
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it('a new migration run by 6 migrators at once is applied by exactly one of them; a re-run applies nothing', async () => {
    const schema = await freshSchema();
    const extra: Migration = { version: LATEST + 1, name: 'extra', sql: 'CREATE TABLE extra (x integer PRIMARY KEY)' };
    const results = await Promise.all(
      Array.from({ length: 6 }, () => migrate(settings(schema.url), [...postgresMigrations, extra])),
    );
    const appliers = results.filter((applied) => applied.length > 0);
    assert.equal(appliers.length, 1, JSON.stringify(results));
    assert.deepEqual(appliers[0], [...postgresMigrations.map((m) => m.version), extra.version]);
    assert.ok(await tableExists(schema, 'extra'));
    assert.deepEqual(await migrate(settings(schema.url), [...postgresMigrations, extra]), []);
  });

  it('rolls a failing migration back entirely, recording nothing', async () => {
    const schema = await freshSchema();
    const broken: Migration = {
      version: LATEST + 1,
      name: 'broken',
      sql: 'CREATE TABLE half (x integer); SELECT 1 / 0',
    };
    await assert.rejects(migrate(settings(schema.url), [...postgresMigrations, broken]), /division by zero/);
    assert.equal(await tableExists(schema, 'half'), false);
    // The whole batch was one transaction: not even the first migration is left behind.
    assert.equal(await tableExists(schema, 'schema_migrations'), false);
    assert.deepEqual(
      await migrate(settings(schema.url), postgresMigrations),
      postgresMigrations.map((m) => m.version),
    );
  });

  it('waits for the lock of its own schema only', async () => {
    const [a, b] = [await freshSchema(), await freshSchema()];
    const holder = new pg.Client({ connectionString: POSTGRES_TEST_URL });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1, $2)', [...migrationLockKey(a.name)]);
      // Another schema's migration is not held up (a hang here would time the test out).
      const storeB = await PostgresStore.open({ url: b.url, poolSize: 1 });
      await storeB.close();
      // This schema's waits until the lock is released.
      let done = false;
      const opening = PostgresStore.open({ url: a.url, poolSize: 1 }).then((store) => {
        done = true;
        return store;
      });
      await sleep(300);
      assert.equal(done, false, 'migrating schema a must wait for its lock');
      await holder.query('SELECT pg_advisory_unlock($1, $2)', [...migrationLockKey(a.name)]);
      await (await opening).close();
      assert.deepEqual(
        await appliedVersions(a),
        postgresMigrations.map((m) => m.version),
      );
    } finally {
      await holder.end();
    }
  });

  it('explains a search_path that names no existing schema', async () => {
    const url = urlWithSchema(POSTGRES_TEST_URL, 'plantstore_no_such_schema');
    await assert.rejects(PostgresStore.open({ url }), (error: unknown) => {
      assert.ok(error instanceof MigrationError);
      assert.match(error.message, /search_path/);
      return true;
    });
  });

  it('`plantstore migrate` applies them and exits 0; a second run changes nothing', async () => {
    const schema = await freshSchema();
    const first = await runCli(['migrate'], { DATABASE_URL: schema.url });
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /migrations applied \(postgres\)/);
    assert.deepEqual(
      await appliedVersions(schema),
      postgresMigrations.map((m) => m.version),
    );
    const again = await runCli(['migrate', '--database-url', schema.url]);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(
      await appliedVersions(schema),
      postgresMigrations.map((m) => m.version),
    );
  });
});
