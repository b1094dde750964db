/**
 * The delivery log filtered by plant (`?plantId=`) must cost what the plant's events cost, not the subscription's
 * whole log: a burst leaves a subscription hundreds of thousands of deliveries. Both stores find the plant's events
 * by the webhook_events_plant index (migration 18), then their deliveries by event; the plans show it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { DELIVERIES_OF_PLANT } from '../../src/store/postgres/webhook-store.js';
import { DELIVERIES_OF_PLANT_SQL } from '../../src/store/sqlite/webhook-store.js';
import { postgresAvailable } from '../support/backends.js';
import { createTestSchema, planNodeTypes, withAdminClient, type TestSchema } from '../support/postgres.js';
import { migratedReadOnly } from '../support/sqlite-stores.js';
import { fillPostgresOutbox } from './outbox.js';

describe('SQLite delivery log of one plant', () => {
  let db: Database.Database;
  before(async () => {
    db = await migratedReadOnly();
  });
  after(() => db?.close());

  it("finds the plant's events by index, then their deliveries by event; scans nothing", () => {
    const parameters = { subscriptionId: 'whk_a', plantId: 77n, status: null, eventId: null, limit: 20 };
    const plan = (
      db.prepare(`EXPLAIN QUERY PLAN ${DELIVERIES_OF_PLANT_SQL}`).all(parameters) as { detail: string }[]
    ).map((row) => row.detail);
    assert.match(plan[0] ?? '', /^SEARCH e USING INDEX webhook_events_plant/, plan.join('\n'));
    assert.match(plan[1] ?? '', /^SEARCH d USING INDEX webhook_deliveries_event/, plan.join('\n'));
    assert.deepEqual(
      plan.filter((step) => step.startsWith('SCAN')),
      [],
      plan.join('\n'),
    );
  });
});

describe('PostgreSQL delivery log of one plant', { skip: !postgresAvailable() }, () => {
  let schema: TestSchema;
  before(async () => {
    schema = await createTestSchema();
    await (await PostgresStore.open({ url: schema.url })).close();
    // 20,000 plant events, each delivered to two subscriptions.
    await withAdminClient(async (client) => {
      await fillPostgresOutbox(client, 20_000);
      await client.query('ANALYZE');
    }, schema.url);
  });
  after(() => schema?.drop());

  for (const [filters, values] of [
    ['no other filter', ['whk_a', null, 20, null, '77']],
    ['and a status', ['whk_a', 'succeeded', 20, null, '77']],
  ] as const)
    it(`finds the plant's events by index, never scans the outbox (${filters})`, async () => {
      const types = await planNodeTypes(DELIVERIES_OF_PLANT.text, values, schema.url);
      assert.ok(
        types.some((type) => type.includes('using webhook_events_plant on webhook_events')),
        types.join(' > '),
      );
      for (const table of ['webhook_events', 'webhook_deliveries'])
        assert.ok(!types.includes(`Seq Scan on ${table}`), types.join(' > '));
    });
});
