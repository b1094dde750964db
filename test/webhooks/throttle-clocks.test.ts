/**
 * Two instances on one PostgreSQL database whose clocks disagree share a subscription's rate: a run is metered by
 * the database's clock, not the claiming instance's (which was read before its statement, and may be skewed or
 * stale). With one instance 900 ms ahead, the other's runs were taken as a second old, and the receiver got two
 * runs within 100 ms. Two dispatchers on two pools, a real receiver.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { postgresAvailable, postgresBackend, type OpenedTestStore } from '../support/backends.js';
import { ARRIVAL_JITTER_MS, mostInWindow, startRateReceiver, type RateReceiver } from './rate-receiver.js';

const RATE = 5;
const EVENTS = 20;
const SKEW_MS = 900;

describe(
  'two PostgreSQL instances with skewed clocks share a subscription rate',
  { skip: !postgresAvailable() },
  () => {
    let opened: OpenedTestStore;
    let second: PostgresStore;
    let receiver: RateReceiver;
    before(async () => {
      opened = await postgresBackend.open();
      second = await PostgresStore.open({ url: opened.databaseUrl, poolSize: 5, idleTimeoutMs: 1000 });
      receiver = await startRateReceiver();
    });
    after(async () => {
      await receiver?.close();
      await second?.close();
      await opened?.cleanup();
    });

    it('sends at most maxPerSecond in any second, every event once, with one instance 900 ms ahead', async () => {
      const { store } = opened;
      await store.webhooks.insertSubscription({
        id: 'whk_skewed_clocks',
        url: receiver.url,
        secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        eventTypes: ['plant.created'],
        createdAt: new Date(),
        maxPerSecond: RATE,
      });
      for (let id = 1; id <= EVENTS; id += 1)
        assert.equal((await store.plants.createPlant({ id: BigInt(id), name: `plant ${id}` })).kind, 'created');
      const dispatchers = [
        { store, skewMs: 0 },
        { store: second, skewMs: SKEW_MS },
      ].map(
        ({ store: instance, skewMs }) =>
          new WebhookDispatcher(instance.webhooks, {
            concurrency: 8,
            pollIntervalMs: 20,
            timeoutMs: 5000,
            retrySchedule: [],
            urlPolicy: { allowPrivate: true },
            log: { info: () => undefined, warn: () => undefined },
            now: () => new Date(Date.now() + skewMs),
          }),
      );
      for (const dispatcher of dispatchers) dispatcher.start();
      try {
        await receiver.waitForIds(EVENTS, 60_000);
        // Every attempt recorded before the dispatchers stop (stopping releases what is in flight).
        await Promise.all(dispatchers.map((dispatcher) => dispatcher.idle()));
      } finally {
        await Promise.all(dispatchers.map((dispatcher) => dispatcher.stop()));
      }
      assert.equal(receiver.arrivals.length, EVENTS, 'each event once');
      // Runs a second apart arrive closer by their trips' jitter (the two dispatchers share one busy event loop
      // here): windows of half a second still hold at most one run, and runs of both instances in one second (the
      // fault) put 10 into one. The span is the rate over the whole: 20 events at 5 a second are 4 runs.
      const window = 1000 - 2 * ARRIVAL_JITTER_MS;
      const most = mostInWindow(receiver.arrivals, window);
      assert.ok(most <= RATE, `${most} arrived within ${window} ms; the rate is ${RATE}`);
      const span = Math.max(...receiver.arrivals) - Math.min(...receiver.arrivals);
      const shortest = (EVENTS / RATE - 1) * 1000 - ARRIVAL_JITTER_MS;
      assert.ok(span >= shortest, `${EVENTS} events arrived within ${Math.round(span)} ms; the rate is ${RATE}`);
      const pending = await store.webhooks.listDeliveries('whk_skewed_clocks', { limit: 100, status: 'pending' });
      assert.equal(pending.length, 0);
    });
  },
);
