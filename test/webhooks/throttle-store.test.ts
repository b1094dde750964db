/**
 * The claim, on each store: a throttled subscription gives at most its rate in any one second, a subscription's
 * backlog never fills a claim, and a dispatcher's per-subscription share is kept. On PostgreSQL, two stores
 * (two pools, as two instances would have) claiming at once share one subscription's rate.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { ClaimedDelivery, Store } from '../../src/store/types.js';
import { postgresAvailable, postgresBackend, testBackends, type OpenedTestStore } from '../support/backends.js';
import { execSql } from './database.js';
import { addSubscription } from './outbox.js';

let plantId = 0;

async function createPlants(store: Store, count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    const outcome = await store.plants.createPlant({ id: BigInt((plantId += 1)), name: `plant ${plantId}` });
    assert.equal(outcome.kind, 'created');
  }
}

function claim(
  store: Store,
  now: Date,
  limit: number,
  extra: { perSubscription?: number; inFlight?: Map<string, number> } = {},
) {
  return store.webhooks.claimDueDeliveries({ now, limit, leaseMs: 60_000, owner: `test:${Math.random()}`, ...extra });
}

const bySubscription = (claimed: readonly ClaimedDelivery[]) => {
  const counts = new Map<string, number>();
  for (const { subscriptionId: id } of claimed) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
};

/**
 * Makes `ms` pass for every subscription's throttle: its run's last start is moved back. The claims of a test pass
 * one fixed `now` (SQLite meters by it); PostgreSQL meters by its own clock, which only moves on by the few
 * milliseconds between a test's statements.
 */
async function throttleTimePasses(databaseUrl: string, ms: number): Promise<void> {
  await execSql(databaseUrl, {
    sqlite: `UPDATE webhook_subscriptions SET throttle_last_at = throttle_last_at - ${ms}`,
    postgres: `UPDATE webhook_subscriptions SET throttle_last_at = throttle_last_at - ${ms} * interval '1 millisecond'`,
  });
}

/** Subscriptions are made in each test; the ones of earlier tests are removed so their backlog stays out. */
async function clearSubscriptions(store: Store): Promise<void> {
  for (const { id } of await store.webhooks.listSubscriptions()) await store.webhooks.deleteSubscription(id);
}

for (const backend of testBackends()) {
  describe(`webhook claims, throttle and fairness (${backend.name})`, () => {
    let opened: OpenedTestStore;
    before(async () => {
      opened = await backend.open();
    });
    after(async () => {
      await opened?.cleanup();
    });

    it('gives a throttled subscription at most its rate, then a new run once a second has passed since the last', async () => {
      const { store } = opened;
      await clearSubscriptions(store);
      const throttled = await addSubscription(store, 5);
      await createPlants(store, 20);
      const now = new Date(Date.now() + 10);
      const elapse = (ms: number) => throttleTimePasses(opened.databaseUrl, ms);

      assert.equal((await claim(store, now, 3)).length, 3, 'the claim limit holds first');
      await elapse(500);
      assert.equal((await claim(store, now, 100)).length, 2, 'then the rest of the run of 5');
      await elapse(300);
      assert.equal((await claim(store, now, 100)).length, 0, 'nothing more within the second');
      // A second after the run's first start is not enough: the last start was 500 ms later.
      await elapse(400);
      assert.equal((await claim(store, now, 100)).length, 0);
      await elapse(400);
      const next = await claim(store, now, 100);
      assert.equal(next.length, 5);
      assert.deepEqual([...bySubscription(next).keys()], [throttled]);
      // Waiting deliveries are untouched: still pending, no attempt counted, due as before.
      const pending = await store.webhooks.listDeliveries(throttled, { limit: 100, status: 'pending' });
      assert.equal(pending.length, 20);
      assert.ok(pending.every((delivery) => delivery.attemptCount === 0 && delivery.attempts.length === 0));
      const subscription = await store.webhooks.getSubscription(throttled);
      assert.equal(subscription?.maxPerSecond, 5);
      assert.equal(subscription?.enabled, true);
    });

    it('takes every subscription oldest due first, so one backlog does not fill a claim', async () => {
      const { store } = opened;
      await clearSubscriptions(store);
      const busy = await addSubscription(store);
      await createPlants(store, 30); // 30 for busy alone
      const quiet = await addSubscription(store);
      await createPlants(store, 2); // 2 each
      const claimed = await claim(store, new Date(Date.now() + 10), 4);
      assert.deepEqual(Object.fromEntries(bySubscription(claimed)), { [busy]: 2, [quiet]: 2 });
    });

    it('keeps to the dispatcher share per subscription while another has deliveries due, not when alone', async () => {
      const { store } = opened;
      await clearSubscriptions(store);
      const slow = await addSubscription(store);
      await createPlants(store, 10);
      const now = new Date(Date.now() + 10);
      // Alone with deliveries due, it may use every free slot, whatever it has in flight.
      const alone = await claim(store, now, 3, { perSubscription: 6, inFlight: new Map([[slow, 6]]) });
      assert.equal(alone.length, 3);
      const other = await addSubscription(store);
      await createPlants(store, 10);
      const later = new Date(Date.now() + 10);
      const shared = await claim(store, later, 8, { perSubscription: 6, inFlight: new Map([[slow, 4]]) });
      assert.deepEqual(Object.fromEntries(bySubscription(shared)), { [slow]: 2, [other]: 6 });
      const full = await claim(store, later, 8, { perSubscription: 6, inFlight: new Map([[slow, 6]]) });
      assert.deepEqual(Object.fromEntries(bySubscription(full)), { [other]: 4 });
    });

    it('lifts and changes the throttle with a change of the subscription', async () => {
      const { store } = opened;
      await clearSubscriptions(store);
      const id = await addSubscription(store, 2);
      await createPlants(store, 10);
      const now = new Date(Date.now() + 10);
      assert.equal((await claim(store, now, 100)).length, 2);
      const lifted = await store.webhooks.updateSubscription(id, { maxPerSecond: null }, undefined, now);
      assert.equal(lifted.kind, 'updated');
      assert.equal(lifted.kind === 'updated' ? lifted.subscription.maxPerSecond : -1, undefined);
      assert.equal(lifted.kind === 'updated' ? lifted.subscription.version : -1, 2);
      assert.equal((await claim(store, now, 100)).length, 8);
    });
  });
}

describe('two PostgreSQL stores claiming at once share one subscription rate', { skip: !postgresAvailable() }, () => {
  let opened: OpenedTestStore;
  let second: PostgresStore;
  before(async () => {
    opened = await postgresBackend.open();
    second = await PostgresStore.open({ url: opened.databaseUrl, poolSize: 5, idleTimeoutMs: 1000 });
  });
  after(async () => {
    await second?.close();
    await opened?.cleanup();
  });

  it('never leases more than the rate in a run, however the claims interleave', async () => {
    const { store } = opened;
    const id = await addSubscription(store, 7);
    await createPlants(store, 200);
    const now = new Date(Date.now() + 10);
    // Runs 1.1 s apart (each may take 7); within a run, 12 claims of 3 from the two stores at once.
    for (let run = 0; run < 3; run += 1) {
      if (run > 0) await throttleTimePasses(opened.databaseUrl, 1100);
      const claims = await Promise.all(
        Array.from({ length: 12 }, (_, i) => claim(i % 2 === 0 ? store : second, now, 3)),
      );
      const total = claims.reduce((sum, claimed) => sum + claimed.length, 0);
      // SKIP LOCKED lets a claim pass over the row another is metering, so a run may end short; never over.
      assert.ok(total <= 7 && total >= 1, `run ${run}: ${total} claimed`);
      assert.ok(claims.flat().every((delivery) => delivery.subscriptionId === id));
    }
  });
});
