/**
 * Retention must stay cheap however large the outbox grows: every statement of
 * pruneFinishedEvents finds its rows by index (migration 3 / 0003), never by
 * reading webhook_events or webhook_deliveries whole. On PostgreSQL a join to the
 * chosen ids was planned as a sequential scan and a hash; EXPLAIN shows it. (A
 * sort is fine there: with few old events the planner sorts them rather than walk
 * the created_at index.)
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { PRUNE_FINISHED_EVENTS } from '../../src/store/postgres/webhook-store.js';
import { PRUNE_SQL } from '../../src/store/sqlite/webhook-store.js';
import { postgresAvailable } from '../support/backends.js';
import { createTestSchema, planNodeTypes, withAdminClient, type TestSchema } from '../support/postgres.js';
import { migratedReadOnly } from '../support/sqlite-stores.js';
import { fillPostgresOutbox } from './outbox.js';

describe('SQLite retention statements', () => {
  let db: Database.Database;
  before(async () => {
    db = await migratedReadOnly();
  });
  after(() => db?.close());

  for (const [name, sql] of Object.entries(PRUNE_SQL)) {
    it(`${name}: searches by index, never scans an outbox table, never sorts`, () => {
      const args = name === 'prunableEvents' ? [Date.now(), 1000] : ['["msg_a","msg_b"]'];
      const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[]).map(
        (row) => row.detail,
      );
      assert.ok(
        plan.some((step) => step.startsWith('SEARCH')),
        plan.join('\n'),
      );
      // Only json_each (the list of chosen ids) may be scanned.
      assert.deepEqual(
        plan.filter((step) => step.startsWith('SCAN') && !step.startsWith('SCAN json_each')),
        [],
        plan.join('\n'),
      );
      assert.ok(!plan.some((step) => step.includes('TEMP B-TREE')), plan.join('\n'));
    });
  }
});

describe('PostgreSQL retention statement', { skip: !postgresAvailable() }, () => {
  let schema: TestSchema;
  before(async () => {
    schema = await createTestSchema();
    await (await PostgresStore.open({ url: schema.url })).close();
    // 20,000 events a minute apart, two deliveries each (1% pending), one attempt per delivery.
    await withAdminClient(async (client) => {
      await fillPostgresOutbox(client, 20_000);
      await client.query(
        'INSERT INTO webhook_delivery_attempts (delivery_id, attempt, attempted_at, latency_ms) SELECT id, 1, now(), 10 FROM webhook_deliveries',
      );
      await client.query('ANALYZE');
    }, schema.url);
  });
  after(() => schema?.drop());

  for (const before of ['2020-01-02T00:00:00Z', '2030-01-01T00:00:00Z']) {
    it(`never scans an outbox table sequentially (events before ${before})`, async () => {
      const types = await planNodeTypes(PRUNE_FINISHED_EVENTS.text, [before, 1000], schema.url);
      for (const table of ['webhook_events', 'webhook_deliveries', 'webhook_delivery_attempts']) {
        assert.ok(!types.includes(`Seq Scan on ${table}`), types.join(' > '));
      }
    });
  }
});
