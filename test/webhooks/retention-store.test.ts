/**
 * The stores' half of retention, pruneFinishedEvents, on every backend: what goes
 * (old finished events, with their deliveries and attempts), what never goes (an
 * event with a pending delivery, however old; recent events), in chunks, oldest
 * first, and with several pruners at once.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { testBackends, type OpenedTestStore } from '../support/backends.js';
import { withAdminClient } from '../support/postgres.js';
import { addSubscription, backdateEvent, outboxRows, seedEvent, type SeededEvent } from './outbox.js';

const OLD = new Date('2020-01-01T00:00:00Z');
const CUTOFF = new Date('2020-02-01T00:00:00Z');
const RECENT = new Date('2020-03-01T00:00:00Z');

const minutesAfter = (date: Date, minutes: number) => new Date(date.getTime() + minutes * 60_000);

for (const backend of testBackends())
  describe(`pruning finished webhook events [${backend.name}]`, () => {
    let opened: OpenedTestStore;
    let plantId = 0;
    before(async () => {
      opened = await backend.open();
    });
    after(() => opened.cleanup());
    // Each test starts from an empty outbox with two fresh subscriptions.
    let a: string;
    let b: string;
    beforeEach(async () => {
      for (const subscription of await opened.store.webhooks.listSubscriptions())
        await opened.store.webhooks.deleteSubscription(subscription.id);
      await opened.store.webhooks.pruneFinishedEvents(new Date('2100-01-01T00:00:00Z'), 100_000);
      assert.deepEqual(await outboxRows(opened.databaseUrl), { events: [], deliveries: [], attempts: [] });
      a = await addSubscription(opened.store);
      b = await addSubscription(opened.store);
    });
    const seed = async (fates: Record<string, 'succeeded' | 'failed' | 'pending'>, createdAt: Date) => {
      const event = await seedEvent(opened.store, (plantId += 1), fates);
      await backdateEvent(opened.databaseUrl, event.eventId, createdAt);
      return event;
    };

    it('deletes old finished events (succeeded and failed) with their deliveries and attempts, and keeps the rest', async () => {
      const succeeded = await seed({ [a]: 'succeeded', [b]: 'succeeded' }, OLD);
      const failed = await seed({ [a]: 'failed', [b]: 'failed' }, OLD);
      const mixed = await seed({ [a]: 'failed', [b]: 'succeeded' }, minutesAfter(OLD, 1));
      const oldPending = await seed({ [a]: 'succeeded', [b]: 'pending' }, minutesAfter(OLD, -60 * 24 * 365));
      const recent = await seed({ [a]: 'succeeded', [b]: 'failed' }, RECENT);
      const kept = [oldPending, recent];

      assert.equal(await opened.store.webhooks.pruneFinishedEvents(CUTOFF, 100), 3);

      const rows = await outboxRows(opened.databaseUrl);
      const deliveriesOf = (events: typeof kept) => events.flatMap((e) => [...e.deliveries.values()]).sort();
      assert.deepEqual(rows.events, kept.map((e) => e.eventId).sort());
      assert.deepEqual(rows.deliveries, deliveriesOf(kept));
      assert.deepEqual(
        rows.attempts,
        deliveriesOf(kept),
        'one attempt per kept delivery; none of a deleted one is left',
      );
      for (const gone of [succeeded, failed, mixed]) {
        for (const [subscription, delivery] of gone.deliveries)
          assert.equal(await opened.store.webhooks.getDelivery(subscription, delivery), undefined);
      }
      const pending = await opened.store.webhooks.getDelivery(b, oldPending.deliveries.get(b) as string);
      assert.equal(pending?.status, 'pending');
      assert.equal(pending?.attempts.length, 1);
      assert.equal(await opened.store.webhooks.pruneFinishedEvents(CUTOFF, 100), 0, 'nothing more to delete');
    });

    it('never deletes an event whose delivery was made pending again by a manual retry', async () => {
      const retried = await seed({ [a]: 'failed', [b]: 'succeeded' }, OLD);
      const delivery = await opened.store.webhooks.retryDelivery(a, retried.deliveries.get(a) as string, new Date());
      assert.equal(delivery?.status, 'pending');
      assert.equal(await opened.store.webhooks.pruneFinishedEvents(CUTOFF, 100), 0);
      assert.deepEqual((await outboxRows(opened.databaseUrl)).events, [retried.eventId]);
    });

    it('counts an event with no deliveries left (its subscriptions deleted) as finished', async () => {
      const orphan = await seed({ [a]: 'pending', [b]: 'pending' }, OLD);
      await opened.store.webhooks.deleteSubscription(a);
      await opened.store.webhooks.deleteSubscription(b);
      assert.deepEqual(
        (await outboxRows(opened.databaseUrl)).events,
        [orphan.eventId],
        'unsubscribing leaves the event',
      );
      assert.equal(await opened.store.webhooks.pruneFinishedEvents(CUTOFF, 100), 1);
      assert.deepEqual((await outboxRows(opened.databaseUrl)).events, []);
    });

    it('deletes at most `limit` events per call, oldest first, and repeated calls finish the job', async () => {
      // Seeded newest first, so insertion order cannot pass for age order.
      const events: SeededEvent[] = [];
      for (let minute = 4; minute >= 0; minute -= 1)
        events.unshift(await seed({ [a]: 'succeeded', [b]: 'failed' }, minutesAfter(OLD, minute)));
      const recent = await seed({ [a]: 'succeeded', [b]: 'succeeded' }, RECENT);
      const remaining = async () => (await outboxRows(opened.databaseUrl)).events;
      const idsFrom = (index: number) => [...events.slice(index), recent].map((e) => e.eventId).sort();

      assert.equal(await opened.store.webhooks.pruneFinishedEvents(CUTOFF, 2), 2);
      assert.deepEqual(await remaining(), idsFrom(2));
      assert.equal(await opened.store.webhooks.pruneFinishedEvents(CUTOFF, 2), 2);
      assert.deepEqual(await remaining(), idsFrom(4));
      assert.equal(await opened.store.webhooks.pruneFinishedEvents(CUTOFF, 2), 1, 'a short chunk: the job is done');
      assert.equal(await opened.store.webhooks.pruneFinishedEvents(CUTOFF, 2), 0);
      assert.deepEqual(await remaining(), [recent.eventId]);
    });

    it('deletes each event once when several pruners run at once', async () => {
      const count = 40;
      for (let i = 0; i < count; i += 1) await seed({ [a]: 'succeeded', [b]: 'failed' }, minutesAfter(OLD, i));
      const pruner = async () => {
        let deleted = 0;
        for (;;) {
          const chunk = await opened.store.webhooks.pruneFinishedEvents(CUTOFF, 3);
          deleted += chunk;
          if (chunk === 0) return deleted;
        }
      };
      const totals = await Promise.all(Array.from({ length: 5 }, pruner));
      assert.equal(
        totals.reduce((x, y) => x + y, 0),
        count,
        `per pruner: ${totals.join(', ')}`,
      );
      assert.deepEqual(await outboxRows(opened.databaseUrl), { events: [], deliveries: [], attempts: [] });
    });

    // SQLite needs no such test: its writes are serialised by the file's one write lock.
    if (backend.name === 'postgres') {
      it('skips, without waiting for it, an event whose delivery another transaction is updating (a retry in progress)', async () => {
        const busy = await seed({ [a]: 'failed', [b]: 'succeeded' }, OLD);
        const free = await seed({ [a]: 'failed', [b]: 'succeeded' }, OLD);
        await withAdminClient(async (client) => {
          await client.query('BEGIN');
          // What a manual retry does, left uncommitted: it holds the row lock.
          await client.query("UPDATE webhook_deliveries SET status = 'pending', manual = true WHERE id = $1", [
            busy.deliveries.get(a),
          ]);
          try {
            // Waiting for the lock would end in the pool's statement timeout, and fail.
            assert.equal(await opened.store.webhooks.pruneFinishedEvents(CUTOFF, 100), 1);
            assert.deepEqual((await outboxRows(opened.databaseUrl)).events, [busy.eventId]);
          } finally {
            await client.query('COMMIT');
          }
        }, opened.databaseUrl);
        assert.equal(
          await opened.store.webhooks.pruneFinishedEvents(CUTOFF, 100),
          0,
          'the retry committed: its event is pending again',
        );
        assert.equal((await opened.store.webhooks.getDelivery(a, busy.deliveries.get(a) as string))?.status, 'pending');
        assert.equal(await opened.store.webhooks.getDelivery(a, free.deliveries.get(a) as string), undefined);
      });
    }
  });
