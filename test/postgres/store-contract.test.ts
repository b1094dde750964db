/**
 * PostgreSQL specifics of the store, below the HTTP layer: bigint columns holding
 * every digit, token secrets at rest, the statement timeout, a read-only server,
 * and how failures are classified. The contract both stores share is
 * test/store/contract.test.ts.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { StoreUnavailableError } from '../../src/store/errors.js';
import { translatePostgresError } from '../../src/store/postgres/errors.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { issueToken } from '../../src/tokens/token-service.js';
import { postgresAvailable } from '../support/backends.js';
import { adminRows, createTestSchema, POSTGRES_TEST_URL, type TestSchema } from '../support/postgres.js';
import { unversioned } from '../support/assertions.js';

const MIN_INT64 = -9223372036854775808n;
const MAX_INT64 = 9223372036854775807n;

describe('PostgreSQL store contract', { skip: !postgresAvailable() }, () => {
  let schema: TestSchema;
  let store: PostgresStore;
  before(async () => {
    schema = await createTestSchema();
    store = await PostgresStore.open({ url: schema.url, poolSize: 8, statementTimeoutMs: 2000 });
  });
  after(async () => {
    await store?.close();
    await schema?.drop();
  });

  /** Runs SQL on the test schema from a connection of its own. */
  const sql = <R extends pg.QueryResultRow>(text: string, values: unknown[] = []) =>
    adminRows<R>(schema.url, text, values);

  describe('int64 ids', () => {
    it('keeps ids as bigint columns', async () => {
      const columns = await sql<{ data_type: string }>(
        "SELECT data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'plants' AND column_name = 'id'",
      );
      assert.deepEqual(columns, [{ data_type: 'bigint' }]);
    });

    it('stores every digit: the column holds the exact decimal text of the extremes', async () => {
      for (const id of [MIN_INT64, MAX_INT64, 9007199254740993n]) {
        assert.equal((await store.plants.createPlant({ id, name: `n${id}` })).kind, 'created');
        // What the database holds, as text, is every digit.
        assert.deepEqual(await sql('SELECT id::text AS id FROM plants WHERE id = $1::bigint', [id.toString()]), [
          { id: id.toString() },
        ]);
        assert.equal((await store.plants.deletePlant(id)).kind, 'deleted');
      }
    });

    it('parses int8 to bigint in its own pool only, leaving the process-wide pg parser alone', () => {
      assert.equal(pg.types.getTypeParser(20, 'text')('9223372036854775807'), '9223372036854775807');
    });
  });

  describe('tokens', () => {
    it('keeps only the SHA-256 hash of a secret: the secret appears nowhere in the schema', async () => {
      const issued = await issueToken(store.tokens, { name: 'at-rest', scopes: ['plants:read'] });
      const [row] = await sql<{ secret_hash: string }>('SELECT secret_hash FROM tokens WHERE name = $1', ['at-rest']);
      assert.equal(row?.secret_hash, createHash('sha256').update(issued.secret).digest('hex'));
      // Every row of every table of this schema, as text.
      const tables = await sql<{ name: string }>(
        'SELECT quote_ident(table_name) AS name FROM information_schema.tables WHERE table_schema = current_schema()',
      );
      for (const { name } of tables) {
        const rows = await sql<{ text: string }>(`SELECT t::text AS text FROM ${name} t`);
        for (const { text } of rows) assert.ok(!text.includes(issued.secret.slice(4)), `secret found in ${name}`);
      }
    });
  });

  describe('timeouts and failures', () => {
    it('cancels a statement stuck behind a lock after the statement timeout, as StoreUnavailableError, then works again', async () => {
      const quick = await PostgresStore.open({ url: schema.url, poolSize: 2, statementTimeoutMs: 300 });
      const locker = new pg.Client({ connectionString: schema.url });
      try {
        await locker.connect();
        await locker.query('BEGIN');
        await locker.query('LOCK TABLE plants IN ACCESS EXCLUSIVE MODE');
        await assert.rejects(quick.plants.getPlant(1n), (error: unknown) => {
          assert.ok(error instanceof StoreUnavailableError, String(error));
          assert.match(error.message, /57014/);
          return true;
        });
        await locker.query('ROLLBACK');
        assert.equal(await quick.plants.getPlant(1n), undefined);
      } finally {
        await locker.end().catch(() => {});
        await quick.close();
      }
    });

    it('on a read-only server (e.g. a standby): starts, serves reads, but is not ready and answers writes as unavailable', async () => {
      await store.plants.createPlant({ id: 77n, name: 'before read-only' });
      const options = encodeURIComponent(`-c search_path=${schema.name} -c default_transaction_read_only=on`);
      const readOnly = await PostgresStore.open({ url: `${POSTGRES_TEST_URL}?options=${options}`, poolSize: 1 });
      try {
        assert.deepEqual(unversioned(await readOnly.plants.getPlant(77n)), { id: 77n, name: 'before read-only' });
        await assert.rejects(readOnly.ping(), StoreUnavailableError);
        await assert.rejects(readOnly.plants.createPlant({ id: 78n, name: 'refused' }), StoreUnavailableError);
      } finally {
        await readOnly.close();
      }
    });

    it('fails fast with StoreUnavailableError when the server refuses connections', async () => {
      // Port 1 on loopback: nothing listens there, so connect() is refused at once.
      await assert.rejects(
        PostgresStore.open({ url: 'postgres://postgres@127.0.0.1:1/test', connectTimeoutMs: 1000 }),
        StoreUnavailableError,
      );
    });

    it('classifies outage-level failures as unavailable and everything else as itself', () => {
      const withCode = (code: string) => Object.assign(new Error(code), { code });
      for (const code of [
        '08006',
        '08001',
        '57P01',
        '57P02',
        '57P03',
        '57014',
        '53300',
        '25006',
        'ECONNREFUSED',
        'ECONNRESET',
        'ETIMEDOUT',
      ]) {
        assert.ok(translatePostgresError(withCode(code)) instanceof StoreUnavailableError, code);
      }
      for (const message of [
        'Connection terminated unexpectedly',
        'timeout exceeded when trying to connect',
        'Query read timeout',
      ]) {
        assert.ok(translatePostgresError(new Error(message)) instanceof StoreUnavailableError, message);
      }
      const wrapped = new Error('Connection terminated due to connection timeout', { cause: withCode('ETIMEDOUT') });
      assert.ok(translatePostgresError(wrapped) instanceof StoreUnavailableError);
      for (const code of ['23505', '42P01', '22P02', 'EACCES']) {
        const error = withCode(code);
        assert.equal(translatePostgresError(error), error, code);
      }
    });
  });
});
