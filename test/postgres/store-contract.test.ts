/**
 * PostgreSQL specifics of the store contract, below the HTTP layer: exact int64 at
 * both ends, the primary key deciding concurrent creates, the create/delete race,
 * token uniqueness, the statement timeout, and how failures are classified.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { StoreUnavailableError } from '../../src/http/errors.js';
import { translatePostgresError } from '../../src/store/postgres/errors.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { CreatePlantOutcome, NewTokenRecord } from '../../src/store/types.js';
import { issueToken } from '../../src/tokens/token-service.js';
import { postgresAvailable } from '../support/backends.js';
import { createTestSchema, POSTGRES_TEST_URL, withAdminClient, type TestSchema } from '../support/postgres.js';

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
    withAdminClient(async (client) => (await client.query<R>(text, values)).rows, schema.url);

  describe('int64 ids', () => {
    it('keeps ids as bigint columns', async () => {
      const columns = await sql<{ data_type: string }>(
        "SELECT data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'plants' AND column_name = 'id'",
      );
      assert.deepEqual(columns, [{ data_type: 'bigint' }]);
    });

    for (const id of [MIN_INT64, MAX_INT64, MIN_INT64 + 1n, MAX_INT64 - 1n, 9007199254740993n, -9007199254740993n, 0n]) {
      it(`stores, reads, lists and deletes ${id} exactly, as a bigint`, async () => {
        assert.equal((await store.plants.createPlant({ id, name: `n${id}` })).kind, 'created');
        const read = await store.plants.getPlant(id);
        assert.equal(typeof read?.id, 'bigint');
        assert.deepEqual(read, { id, name: `n${id}` });
        const listed = await store.plants.listPlants({ limit: 1, after: id - 1n >= MIN_INT64 ? id - 1n : undefined });
        assert.deepEqual(listed[0], { id, name: `n${id}` });
        // What the database holds, as text, is every digit.
        assert.deepEqual(await sql('SELECT id::text AS id FROM plants WHERE id = $1::bigint', [id.toString()]), [{ id: id.toString() }]);
        assert.equal(await store.plants.deletePlant(id), true);
        assert.equal(await store.plants.deletePlant(id), false);
      });
    }

    it('orders by signed 64-bit value across the whole range', async () => {
      const ids = [MAX_INT64, 0n, -1n, MIN_INT64, 9007199254740993n, 9007199254740992n, -9007199254740993n];
      for (const id of ids) await store.plants.createPlant({ id, name: 'order' });
      const listed = (await store.plants.listPlants({ limit: 100 })).map((p) => p.id);
      assert.deepEqual(listed, [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
      const afterMinusOne = (await store.plants.listPlants({ limit: 100, after: -1n })).map((p) => p.id);
      assert.deepEqual(afterMinusOne, [0n, 9007199254740992n, 9007199254740993n, MAX_INT64]);
      for (const id of ids) await store.plants.deletePlant(id);
    });

    it('parses int8 to bigint in its own pool only, leaving the process-wide pg parser alone', () => {
      assert.equal(pg.types.getTypeParser(20, 'text')('9223372036854775807'), '9223372036854775807');
    });
  });

  describe('creates', () => {
    it('stores tags, omits absent ones, and answers replay and conflict like SQLite', async () => {
      assert.deepEqual(await store.plants.createPlant({ id: 10n, name: 'Fern', tag: 'shade' }), { kind: 'created', plant: { id: 10n, name: 'Fern', tag: 'shade' } });
      assert.deepEqual(await store.plants.createPlant({ id: 10n, name: 'Fern', tag: 'shade' }), { kind: 'replayed', plant: { id: 10n, name: 'Fern', tag: 'shade' } });
      assert.deepEqual(await store.plants.createPlant({ id: 10n, name: 'Fern' }), { kind: 'conflict', existing: { id: 10n, name: 'Fern', tag: 'shade' } });
      assert.deepEqual(await store.plants.createPlant({ id: 11n, name: 'Aloe' }), { kind: 'created', plant: { id: 11n, name: 'Aloe' } });
      assert.deepEqual(await store.plants.getPlant(11n), { id: 11n, name: 'Aloe' });
      assert.deepEqual(await store.plants.listPlants({ limit: 10, tag: 'shade' }), [{ id: 10n, name: 'Fern', tag: 'shade' }]);
    });

    it('100 parallel identical creates of one id: one created, 99 replayed, one row', async () => {
      const outcomes = await Promise.all(Array.from({ length: 100 }, () => store.plants.createPlant({ id: MAX_INT64, name: 'same', tag: 't' })));
      assert.equal(outcomes.filter((o) => o.kind === 'created').length, 1);
      assert.equal(outcomes.filter((o) => o.kind === 'replayed').length, 99);
      assert.deepEqual(await sql('SELECT count(*)::int AS n FROM plants WHERE id = $1', [MAX_INT64.toString()]), [{ n: 1 }]);
    });

    it('100 parallel creates of one id with three different contents: one winner, the rest replayed or in conflict by content', async () => {
      const variants = [{ name: 'a' }, { name: 'a', tag: 'x' }, { name: 'b' }];
      const requests = Array.from({ length: 100 }, (_, i) => ({ id: MIN_INT64, ...variants[i % 3]! }));
      const outcomes: CreatePlantOutcome[] = await Promise.all(requests.map((plant) => store.plants.createPlant(plant)));
      const stored = await store.plants.getPlant(MIN_INT64);
      assert.ok(stored !== undefined);
      assert.equal(outcomes.filter((o) => o.kind === 'created').length, 1);
      requests.forEach((plant, i) => {
        const same = plant.name === stored.name && plant.tag === stored.tag;
        const outcome = outcomes[i]!;
        if (same) assert.ok(outcome.kind === 'created' || outcome.kind === 'replayed', `request ${i}: ${outcome.kind}`);
        else assert.deepEqual(outcome, { kind: 'conflict', existing: stored }, `request ${i}`);
      });
    });

    it('a create racing deletes of the same id never fails: it creates, replays or conflicts', async () => {
      const id = 4242n;
      const deadline = Date.now() + 3000;
      let rounds = 0;
      while (rounds < 50 && Date.now() < deadline) {
        rounds += 1;
        const results = await Promise.all([
          store.plants.createPlant({ id, name: 'racer' }),
          store.plants.deletePlant(id),
          store.plants.createPlant({ id, name: 'racer' }),
          store.plants.deletePlant(id),
          store.plants.createPlant({ id, name: 'other' }),
        ]);
        for (const result of [results[0], results[2], results[4]] as CreatePlantOutcome[]) {
          assert.ok(['created', 'replayed', 'conflict'].includes(result.kind));
        }
      }
      assert.ok(rounds > 0);
    });
  });

  describe('tokens', () => {
    const token = (name: string, overrides: Partial<NewTokenRecord> = {}): NewTokenRecord => ({
      id: `tok_${name}`,
      name,
      secretHash: `hash-${name}`,
      scopes: ['plants:read', 'plants:write'],
      createdAt: new Date(Date.UTC(2030, 0, 1, 12, 0, 0, 123)),
      expiresAt: null,
      ...overrides,
    });

    it('inserts once per name, finds by hash with every field exact, and counts', async () => {
      const expiresAt = new Date(Date.UTC(2031, 5, 6, 7, 8, 9, 987));
      assert.equal(await store.tokens.insertToken(token('alpha', { expiresAt })), true);
      assert.equal(await store.tokens.insertToken(token('alpha', { id: 'tok_other', secretHash: 'other' })), false);
      assert.deepEqual(await store.tokens.findTokenBySecretHash('hash-alpha'), {
        id: 'tok_alpha',
        name: 'alpha',
        scopes: ['plants:read', 'plants:write'],
        createdAt: new Date(Date.UTC(2030, 0, 1, 12, 0, 0, 123)),
        expiresAt,
        lastUsedAt: null,
        revokedAt: null,
      });
      assert.equal(await store.tokens.findTokenBySecretHash('nope'), undefined);
      assert.equal(await store.tokens.countTokens(), 1);
    });

    it('refuses a second token with the same secret hash, as SQLite does', async () => {
      await assert.rejects(store.tokens.insertToken(token('beta', { secretHash: 'hash-alpha' })), (error: unknown) => {
        assert.ok(!(error instanceof StoreUnavailableError));
        return true;
      });
    });

    it('revokes by id or by name, keeping the first revocation time; records use', async () => {
      await store.tokens.insertToken(token('gamma'));
      const first = new Date(Date.UTC(2032, 0, 1));
      assert.deepEqual((await store.tokens.revokeToken('tok_gamma', first))?.revokedAt, first);
      assert.deepEqual((await store.tokens.revokeToken('gamma', new Date(Date.UTC(2033, 0, 1))))?.revokedAt, first);
      assert.equal(await store.tokens.revokeToken('missing', first), undefined);
      const used = new Date(Date.UTC(2032, 1, 2, 3, 4, 5, 6));
      await store.tokens.recordTokenUse('tok_alpha', used);
      assert.deepEqual((await store.tokens.findTokenBySecretHash('hash-alpha'))?.lastUsedAt, used);
    });

    it('keeps only the SHA-256 hash of a secret: the secret appears nowhere in the schema', async () => {
      const issued = await issueToken(store.tokens, { name: 'at-rest', scopes: ['plants:read'] });
      const [row] = await sql<{ secret_hash: string }>('SELECT secret_hash FROM tokens WHERE name = $1', ['at-rest']);
      assert.equal(row?.secret_hash, createHash('sha256').update(issued.secret).digest('hex'));
      // Every row of every table of this schema, as text.
      const tables = await sql<{ name: string }>("SELECT quote_ident(table_name) AS name FROM information_schema.tables WHERE table_schema = current_schema()");
      for (const { name } of tables) {
        const rows = await sql<{ text: string }>(`SELECT t::text AS text FROM ${name} t`);
        for (const { text } of rows) assert.ok(!text.includes(issued.secret.slice(4)), `secret found in ${name}`);
      }
    });

    it('lists by creation time, then id in byte order', async () => {
      const at = new Date(Date.UTC(2029, 0, 1));
      await store.tokens.insertToken(token('lower', { id: 'tok_a', createdAt: at }));
      await store.tokens.insertToken(token('upper', { id: 'tok_B', createdAt: at }));
      const ids = (await store.tokens.listTokens()).map((t) => t.id).filter((id) => id === 'tok_a' || id === 'tok_B');
      assert.deepEqual(ids, ['tok_B', 'tok_a']);
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

    it('answers ping, and rejects with StoreUnavailableError once closed', async () => {
      await store.ping();
      const other = await PostgresStore.open({ url: schema.url, poolSize: 1 });
      await other.close();
      await other.close();
      await assert.rejects(other.ping(), StoreUnavailableError);
    });

    it('on a read-only server (e.g. a standby): starts, serves reads, but is not ready and answers writes as unavailable', async () => {
      await store.plants.createPlant({ id: 77n, name: 'before read-only' });
      const options = encodeURIComponent(`-c search_path=${schema.name} -c default_transaction_read_only=on`);
      const readOnly = await PostgresStore.open({ url: `${POSTGRES_TEST_URL}?options=${options}`, poolSize: 1 });
      try {
        assert.deepEqual(await readOnly.plants.getPlant(77n), { id: 77n, name: 'before read-only' });
        await assert.rejects(readOnly.ping(), StoreUnavailableError);
        await assert.rejects(readOnly.plants.createPlant({ id: 78n, name: 'refused' }), StoreUnavailableError);
      } finally {
        await readOnly.close();
      }
    });

    it('fails fast with StoreUnavailableError when the server refuses connections', async () => {
      // Port 1 on loopback: nothing listens there, so connect() is refused at once.
      await assert.rejects(PostgresStore.open({ url: 'postgres://postgres@127.0.0.1:1/test', connectTimeoutMs: 1000 }), StoreUnavailableError);
    });

    it('classifies outage-level failures as unavailable and everything else as itself', () => {
      const withCode = (code: string) => Object.assign(new Error(code), { code });
      for (const code of ['08006', '08001', '57P01', '57P02', '57P03', '57014', '53300', '25006', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT']) {
        assert.ok(translatePostgresError(withCode(code)) instanceof StoreUnavailableError, code);
      }
      for (const message of ['Connection terminated unexpectedly', 'timeout exceeded when trying to connect', 'Query read timeout']) {
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
