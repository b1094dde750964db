/**
 * A receiver down for a simulated week: the dispatcher (on a real store, with an injected clock instead of
 * sleeping) disables the subscription once every attempt has failed for WEBHOOK_DISABLE_AFTER, logs it and
 * reports it once; events written while it is disabled are kept and arrive, signed, once it is enabled again.
 * And of several instances disabling at once, exactly one does. Runs on every store backend.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseRetrySchedule, DEFAULT_RETRY_SCHEDULE } from '../../src/config/retry-schedule.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { Store, WebhookSubscription } from '../../src/store/types.js';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { createSubscription } from '../../src/webhooks/subscriptions.js';
import { recoveryWindow, WebhookRecoveries } from '../../src/webhooks/recovery.js';
import { testBackends, type OpenedTestStore } from '../support/backends.js';
import { sleep, startReceiver, verifySignature, type Receiver } from './receiver.js';

const DAY = 86_400_000;
const DISABLE_AFTER = 5 * DAY;

for (const backend of testBackends())
  describe(`disabling a failing subscription [${backend.name}]`, () => {
    let opened: OpenedTestStore;
    let store: Store;
    let receiver: Receiver;
    let healthyReceiver: Receiver;
    before(async () => {
      opened = await backend.open();
      store = opened.store;
      receiver = await startReceiver(() => 503);
      healthyReceiver = await startReceiver(() => 200);
    });
    after(async () => {
      await receiver.close();
      await healthyReceiver.close();
      await opened.cleanup();
    });

    it('a week-long outage: disabled after 5 days, once; enabled and recovered, every event arrives, signed', async (t) => {
      const realStart = Date.now();
      // Ahead of the real time: events are due from the real time of their write.
      let clock = Date.now() + 3_600_000;
      const warnings: { fields: object; message: string }[] = [];
      const disabledEvents: WebhookSubscription[] = [];
      const dispatcher = new WebhookDispatcher(store.webhooks, {
        concurrency: 4,
        pollIntervalMs: 20,
        timeoutMs: 1000,
        retrySchedule: parseRetrySchedule(DEFAULT_RETRY_SCHEDULE),
        urlPolicy: { allowPrivate: true },
        log: { info: () => undefined, warn: (fields, message) => warnings.push({ fields, message }) },
        disableAfterMs: DISABLE_AFTER,
        onDisabled: (subscription) => disabledEvents.push(subscription),
        now: () => new Date(clock),
      });
      const subscription = await createSubscription(
        store.webhooks,
        { url: receiver.url, eventTypes: ['plant.created'] },
        { allowPrivate: true },
        new Date(clock),
      );
      const healthy = await createSubscription(
        store.webhooks,
        { url: healthyReceiver.url, eventTypes: ['plant.created'] },
        { allowPrivate: true },
        new Date(clock),
      );

      const current = async () => (await store.webhooks.getSubscription(subscription.id)) as WebhookSubscription;
      /** Until every due delivery of an enabled subscription has been attempted at the simulated time. */
      const settle = async () => {
        dispatcher.nudge();
        for (;;) {
          const [mine, theirs] = await Promise.all([
            store.webhooks.listDeliveries(subscription.id, { limit: 1000 }),
            store.webhooks.listDeliveries(healthy.id, { limit: 1000 }),
          ]);
          const enabled = (await current()).enabled;
          const due = [...(enabled ? mine : []), ...theirs].filter(
            (d) => d.status === 'pending' && (d.nextAttemptAt?.getTime() ?? 0) <= clock,
          );
          if (due.length === 0) return dispatcher.idle();
          await sleep(10);
          dispatcher.nudge();
        }
      };
      /** Runs every attempt due up to `until`, in order, then sets the clock there. */
      const runUntil = async (until: number) => {
        for (;;) {
          await settle();
          const pending = (await store.webhooks.listDeliveries(subscription.id, { limit: 1000 }))
            .filter((d) => d.status === 'pending' && (d.nextAttemptAt?.getTime() ?? 0) > clock)
            .map((d) => d.nextAttemptAt?.getTime() ?? 0);
          const next = Math.min(...pending);
          if (!(await current()).enabled || pending.length === 0 || next > until) break;
          clock = next;
        }
        clock = until;
        await settle();
      };

      dispatcher.start();
      try {
        const start = clock;
        let day = 0;
        for (; day < 7; day += 1) {
          await runUntil(start + day * DAY);
          await store.plants.createPlant({ id: BigInt(1000 + day), name: `Day ${day}` });
          await settle();
          if (!(await current()).enabled) break;
        }
        // Day 5's failed first attempt is the one that crosses 5 days of failing.
        assert.equal(day, 5, 'disabled on day 5');
        const disabled = await current();
        assert.equal(disabled.enabled, false);
        assert.equal(disabled.disabledAt?.getTime(), start + 5 * DAY);
        assert.match(disabled.disabledReason ?? '', /every delivery attempt failed for 5d/);
        assert.equal(disabledEvents.length, 1, 'reported once');
        assert.equal(disabledEvents[0]?.id, subscription.id);
        assert.equal(warnings.filter((w) => w.message.startsWith('webhooks: subscription disabled')).length, 1);
        // Another subscription is not held by the failing one.
        assert.equal((await store.webhooks.getSubscription(healthy.id))?.enabled, true);
        assert.equal(healthyReceiver.received.length, 6);

        // The rest of the week: creates go on, nothing is sent to the disabled subscription.
        const sentBefore = receiver.received.length;
        await store.plants.createPlant({ id: 1006n, name: 'Day 6' });
        await runUntil(start + 7 * DAY);
        assert.equal(receiver.received.length, sentBefore);
        assert.equal(healthyReceiver.received.length, 7);
        assert.equal((await current()).enabled, false);

        // The receiver is back; enabling sends every delivery still pending, signed as usual.
        receiver.respondWith(() => 200);
        const outcome = await store.webhooks.updateSubscription(
          subscription.id,
          { enabled: true },
          undefined,
          new Date(clock),
        );
        assert.equal(outcome.kind, 'updated');
        const waiting = (await store.webhooks.listDeliveries(subscription.id, { limit: 1000 })).filter(
          (d) => d.status === 'pending',
        );
        // Days 5 and 6 (written at or after the disable), and day 4 if its jittered schedule outlasted day 5's start.
        assert.ok(waiting.length === 2 || waiting.length === 3, String(waiting.length));
        await settle();
        const log = await store.webhooks.listDeliveries(subscription.id, { limit: 1000 });
        for (const delivery of log.filter((d) => waiting.some((w) => w.id === d.id)))
          assert.equal(delivery.status, 'succeeded', delivery.id);
        const acknowledged = receiver.received.filter((r) => r.answered === 200);
        // Signed at the simulated time: the library checks the timestamp against it.
        t.mock.timers.enable({ apis: ['Date'], now: clock });
        try {
          for (const request of acknowledged) verifySignature(subscription.secret, request);
        } finally {
          t.mock.timers.reset();
        }
        assert.deepEqual(
          acknowledged.map((r) => String(r.headers['webhook-id'])).sort(),
          waiting.map((d) => d.eventId).sort(),
        );
        assert.equal((await current()).enabled, true);

        // The events whose schedule ran out during the outage: recovered, so every one of the week arrives.
        const recoveries = new WebhookRecoveries(store.webhooks, {
          log: { info: () => undefined, warn: (fields, message) => warnings.push({ fields, message }) },
          nudge: () => dispatcher.nudge(),
          batch: 2,
        });
        const window = recoveryWindow(new Date(realStart).toISOString(), undefined, new Date(), 30);
        const recovery = await recoveries.start(subscription.id, window);
        assert.ok(recovery);
        await recoveries.idle();
        const finished = await store.webhooks.getRecovery(subscription.id, recovery.id);
        assert.equal(finished?.status, 'done');
        assert.equal(finished?.requeued, 7 - waiting.length);
        await settle();
        const all = await store.webhooks.listDeliveries(subscription.id, { limit: 1000 });
        assert.equal(all.length, 7);
        assert.ok(all.every((d) => d.status === 'succeeded'));
        const delivered = new Set(
          receiver.received.filter((r) => r.answered === 200).map((r) => String(r.headers['webhook-id'])),
        );
        assert.deepEqual([...delivered].sort(), all.map((d) => d.eventId).sort(), 'nothing lost');
        // The same window again: the same recovery, nothing re-queued twice.
        const again = await new WebhookRecoveries(store.webhooks, {
          log: { info: () => undefined, warn: () => undefined },
          nudge: () => undefined,
        }).start(subscription.id, window);
        assert.equal(again?.id, recovery.id);
        assert.equal(again?.requeued, 7 - waiting.length);
      } finally {
        await dispatcher.stop();
      }
    });
  });

describe('disabling from several PostgreSQL instances at once', () => {
  for (const backend of testBackends().filter((b) => b.name === 'postgres'))
    it('exactly one instance disables the subscription and emits its webhook.disabled, once', async () => {
      const opened = await backend.open();
      const others = await Promise.all(
        [1, 2].map(() => PostgresStore.open({ url: opened.databaseUrl, poolSize: 3, idleTimeoutMs: 1000 })),
      );
      try {
        const stores = [opened.store, ...others];
        const now = new Date();
        const subscription = await createSubscription(
          opened.store.webhooks,
          { url: 'http://127.0.0.1:9/hook' },
          { allowPrivate: true },
          now,
        );
        const watcherReceiver = await startReceiver(() => 200);
        const watcher = await createSubscription(
          opened.store.webhooks,
          { url: watcherReceiver.url, eventTypes: ['webhook.disabled'] },
          { allowPrivate: true },
          now,
        );
        const logBefore = (await opened.store.changes.bounds()).last;
        // Marked failing by a failed attempt recorded a week ago.
        const claimedAt = new Date(now.getTime() - 7 * DAY);
        await opened.store.plants.createPlant({ id: 1n, name: 'Failing' });
        // A moment ahead: the event is due from the real time of its write.
        const [claimed] = await opened.store.webhooks.claimDueDeliveries({
          now: new Date(Date.now() + 1000),
          limit: 1,
          leaseMs: 60_000,
          owner: 'test',
        });
        assert.ok(claimed);
        await opened.store.webhooks.recordAttempt({
          deliveryId: claimed.deliveryId,
          leaseOwner: 'test',
          attempt: { attempt: 1, attemptedAt: claimedAt, latencyMs: 1, error: 'the subscriber answered 503' },
          outcome: { kind: 'retry', nextAttemptAt: now },
        });
        const results = await Promise.all(
          stores.flatMap((store) =>
            [1, 2, 3].map(() =>
              store.webhooks.disableFailingSubscription(
                subscription.id,
                new Date(now.getTime() - 5 * DAY),
                now,
                'down',
              ),
            ),
          ),
        );
        assert.equal(results.filter((r) => r !== undefined).length, 1);
        const after = await opened.store.webhooks.getSubscription(subscription.id);
        assert.equal(after?.enabled, false);
        assert.equal(after?.version, 2);
        assert.equal(after?.disabledReason, 'down');

        // One event: one delivery to the subscription that chose the type, one change-log entry.
        const deliveries = await opened.store.webhooks.listDeliveries(watcher.id, { limit: 10 });
        assert.deepEqual(
          deliveries.map((d) => d.eventType),
          ['webhook.disabled'],
        );
        const logged = (await opened.store.changes.after(logBefore, 100)).filter((e) => e.type === 'webhook.disabled');
        assert.equal(logged.length, 1);
        const dispatchers = stores.map(
          (store) =>
            new WebhookDispatcher(store.webhooks, {
              concurrency: 2,
              pollIntervalMs: 20,
              timeoutMs: 1000,
              retrySchedule: [],
              urlPolicy: { allowPrivate: true },
              log: { info: () => undefined, warn: () => undefined },
            }),
        );
        for (const dispatcher of dispatchers) dispatcher.start();
        try {
          const [received] = await watcherReceiver.waitFor((r) => r.length >= 1);
          await sleep(300);
          assert.equal(watcherReceiver.received.length, 1);
          assert.ok(received);
          assert.equal(received.headers['webhook-id'], deliveries[0]?.eventId);
          assert.deepEqual(JSON.parse(verifySignature(watcher.secret, received)), {
            id: subscription.id,
            url: subscription.url,
            disabledAt: now.toISOString(),
            disabledReason: 'down',
          });
          assert.equal(logged[0]?.payload, received.body);
        } finally {
          await Promise.all(dispatchers.map((dispatcher) => dispatcher.stop()));
          await watcherReceiver.close();
        }
      } finally {
        await Promise.all(others.map((store) => store.close()));
        await opened.cleanup();
      }
    });
});
