/**
 * Behind a real PgBouncer in transaction mode: a set-up that would misbehave silently (LISTEN or named statements
 * through the pooler) is refused at start with an error naming the setting; the right one (DATABASE_POOLER=
 * transaction, DATABASE_LISTEN_URL direct) serves creates, changes, imports, exports, the change log's wake-ups
 * and webhook claims, and migrates (a transaction's advisory lock) through the pooler.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigError } from '../../src/config/errors.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { postgresAvailable } from '../support/backends.js';
import { pgbouncerInstalled, startPgBouncer, type PgBouncer } from '../support/pgbouncer.js';
import { adminRows, createTestSchema, type TestSchema } from '../support/postgres.js';

const skip = !postgresAvailable() || !pgbouncerInstalled();

describe('PostgreSQL store behind PgBouncer in transaction mode', { skip }, () => {
  let schema: TestSchema;
  let pooler: PgBouncer;
  before(async () => {
    schema = await createTestSchema();
    pooler = await startPgBouncer(schema.name);
  });
  after(async () => {
    await pooler?.stop();
    await schema?.drop();
  });

  const refusal = async (options: Parameters<typeof PostgresStore.open>[0]): Promise<ConfigError> => {
    const error = await PostgresStore.open(options).then(
      async (store) => {
        await store.close();
        return undefined;
      },
      (thrown: unknown) => thrown,
    );
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return error;
  };

  it('refuses the pooler as a plain DATABASE_URL, naming DATABASE_POOLER and DATABASE_LISTEN_URL', async () => {
    const error = await refusal({ url: pooler.url });
    assert.match(error.message, /DATABASE_URL .* reaches a pooler in transaction mode/);
    assert.match(error.message, /DATABASE_POOLER=transaction/);
    assert.match(error.message, /DATABASE_LISTEN_URL/);
  });

  it('refuses DATABASE_POOLER=transaction without DATABASE_LISTEN_URL', async () => {
    assert.match(
      (await refusal({ url: pooler.url, pooler: 'transaction' })).message,
      /DATABASE_LISTEN_URL must be set/,
    );
  });

  it('refuses a DATABASE_LISTEN_URL that reaches the pooler', async () => {
    const error = await refusal({ url: pooler.url, pooler: 'transaction', listenUrl: pooler.url });
    assert.match(error.message, /DATABASE_LISTEN_URL .* reaches a pooler in transaction mode/);
  });

  it('accepts PostgreSQL itself with DATABASE_POOLER=none (no false alarm on direct connections)', async () => {
    const store = await PostgresStore.open({ url: schema.url, listenUrl: schema.url });
    await store.close();
  });

  it('with DATABASE_POOLER=transaction and a direct DATABASE_LISTEN_URL, migrates and serves through the pooler', async () => {
    // Two instances migrating the empty schema at once through the pooler: the advisory lock is a transaction's.
    const [store, other] = await Promise.all([
      PostgresStore.open({ url: pooler.url, pooler: 'transaction', listenUrl: schema.url, poolSize: 4 }),
      PostgresStore.open({ url: pooler.url, pooler: 'transaction', listenUrl: schema.url, poolSize: 4 }),
    ]);
    try {
      await store.ping();
      let wake: () => void = () => {};
      const woken = new Promise<void>((resolve) => (wake = resolve));
      const stopWatching = store.changes.watch(() => wake());
      // Many statements over few server connections: named statements would meet the wrong connection (26000).
      const ids = Array.from({ length: 60 }, (_, i) => BigInt(i + 1));
      await Promise.all(ids.map((id) => other.plants.createPlant({ id, name: `plant ${id}`, tag: 'pooled' })));
      await woken;
      for (const id of ids) assert.equal((await store.plants.getPlant(id))?.name, `plant ${id}`);
      const bounds = await store.changes.bounds();
      assert.equal(bounds.last, 60n);
      const entries = await store.changes.after(0n, 100);
      assert.deepEqual(
        entries.map((entry) => entry.position),
        ids,
      );
      const connections = await adminRows<{ n: number }>(
        schema.url,
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'plantstore' AND query LIKE 'LISTEN%'",
      );
      assert.ok((connections[0]?.n ?? 0) >= 1, 'the LISTEN session is a direct connection of its own');
      stopWatching();
    } finally {
      await Promise.all([store.close(), other.close()]);
    }
  });
});
