/**
 * Delivery, end to end: the app on a real store, a real HTTP receiver, signatures
 * checked with the standardwebhooks library. Runs on every store backend.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, postPlant, type Harness } from '../support/harness.js';
import { execSql } from './database.js';
import { sleep, startReceiver, verifySignature, type Receiver, type ReceivedWebhook } from './receiver.js';
import { subscribeWebhook } from './subscribe.js';

/** Fast settings: private URLs allowed (the receiver is on 127.0.0.1), a seconds-scale schedule, a short poll. */
const FAST = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_POLL_INTERVAL_MS: '50', WEBHOOK_TIMEOUT_MS: '1000' };

interface Subscription {
  id: string;
  secret: string;
}

interface Delivery {
  id: string;
  eventId: string;
  status: string;
  attemptCount: number;
  attempts: { attempt: number; responseStatus?: number; error?: string; latencyMs: number; attemptedAt: string }[];
}

const subscribe = (h: Harness, url: string) => subscribeWebhook(h, { url });

async function deliveries(h: Harness, subscription: Subscription): Promise<Delivery[]> {
  const response = await h.request({
    method: 'GET',
    url: `/webhooks/${subscription.id}/deliveries`,
    headers: bearer(h.tokens.admin),
  });
  assert.equal(response.statusCode, 200, response.body);
  return response.json() as Delivery[];
}

async function waitForDeliveries(
  h: Harness,
  subscription: Subscription,
  done: (list: Delivery[]) => boolean,
  timeoutMs = 10_000,
): Promise<Delivery[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = await deliveries(h, subscription);
    if (done(list)) return list;
    if (Date.now() > deadline) throw new Error(`delivery log did not settle: ${JSON.stringify(list, null, 2)}`);
    await sleep(50);
  }
}

const ids = (received: readonly ReceivedWebhook[]) => received.map((r) => String(r.headers['webhook-id']));

for (const backend of testBackends())
  describe(`webhook delivery [${backend.name}]`, () => {
    describe('a healthy subscriber', () => {
      let h: Harness;
      let receiver: Receiver;
      before(async () => {
        h = await createHarness({ backend, env: FAST });
        receiver = await startReceiver();
      });
      after(async () => {
        await h.close();
        await receiver.close();
      });

      it('gets each new plant once, signed, with its int64 id exact', async () => {
        const subscription = await subscribe(h, receiver.url);
        const bodies = [
          '{"id": 9223372036854775807, "name": "Max"}',
          '{"id": -9223372036854775808, "name": "Min", "tag": "edge"}',
          '{"id": 9007199254740993, "name": "Monstera \\"deliciosa\\" ü", "tag": "houseplant", "ignored": true}',
        ];
        for (const body of bodies) assert.equal((await postPlant(h, body)).statusCode, 200);
        const expected = [
          '{"id":9223372036854775807,"name":"Max"}',
          '{"id":-9223372036854775808,"name":"Min","tag":"edge"}',
          '{"id":9007199254740993,"name":"Monstera \\"deliciosa\\" ü","tag":"houseplant"}',
        ];
        await receiver.waitFor((r) => r.length >= 3);
        await sleep(400); // several poll intervals: nothing more may arrive
        assert.equal(receiver.received.length, 3, 'each event exactly once');
        assert.deepEqual(
          receiver.received.map((r) => verifySignature(subscription.secret, r)).sort(),
          [...expected].sort(),
        );
        for (const request of receiver.received) {
          assert.equal(request.method, 'POST');
          assert.equal(request.path, '/hooks/plants');
          assert.equal(request.headers['content-type'], 'application/json');
          assert.equal(request.headers['webhook-event-type'], 'plant.created');
          assert.match(String(request.headers['webhook-id']), /^msg_[A-Za-z0-9_-]{22}$/);
          assert.match(String(request.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+=*$/);
          assert.ok(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000) < 30);
        }
        assert.equal(new Set(ids(receiver.received)).size, 3, 'one webhook-id per event');

        const log = await waitForDeliveries(h, subscription, (list) => list.every((d) => d.status === 'succeeded'));
        assert.equal(log.length, 3);
        for (const delivery of log) {
          assert.equal(delivery.attemptCount, 1);
          assert.equal(delivery.attempts.length, 1);
          assert.equal(delivery.attempts[0]?.responseStatus, 200);
          assert.equal(delivery.attempts[0]?.error, undefined);
          assert.ok(ids(receiver.received).includes(delivery.eventId));
        }
      });

      it('sends one event to every subscription, with the same webhook-id, each signed with its own secret', async () => {
        const other = await startReceiver();
        try {
          const first = await subscribe(h, `${receiver.url}?second`);
          const second = await subscribe(h, other.url);
          const before = receiver.received.length;
          assert.equal((await postPlant(h, '{"id": 77, "name": "shared"}')).statusCode, 200);
          const [atFirst] = (
            await receiver.waitFor((r) => r.some((x, i) => i >= before && x.path === '/hooks/plants?second'))
          ).filter((x, i) => i >= before && x.path === '/hooks/plants?second');
          const [atSecond] = await other.waitFor((r) => r.length === 1);
          assert.ok(atFirst && atSecond);
          assert.equal(atFirst.headers['webhook-id'], atSecond.headers['webhook-id']);
          assert.equal(verifySignature(first.secret, atFirst), '{"id":77,"name":"shared"}');
          assert.equal(verifySignature(second.secret, atSecond), '{"id":77,"name":"shared"}');
          assert.throws(() => verifySignature(first.secret, atSecond), /signature/i);
        } finally {
          await other.close();
        }
      });
    });

    it('retries a failing subscriber with the same webhook-id until it acknowledges', async () => {
      const h = await createHarness({ backend, env: { ...FAST, WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s' } });
      const receiver = await startReceiver((index) => (index < 2 ? 500 : 200));
      try {
        const subscription = await subscribe(h, receiver.url);
        assert.equal((await postPlant(h, '{"id": 9223372036854775807, "name": "persistent"}')).statusCode, 200);
        const received = await receiver.waitFor((r) => r.length >= 3, 15_000);
        await sleep(1500); // past the next point of the schedule: no fourth attempt
        assert.equal(receiver.received.length, 3);
        assert.deepEqual(
          received.map((r) => r.answered),
          [500, 500, 200],
        );
        assert.equal(new Set(ids(received)).size, 1, 'the same webhook-id on every attempt');
        for (const request of received)
          assert.equal(verifySignature(subscription.secret, request), '{"id":9223372036854775807,"name":"persistent"}');
        // Each attempt was spaced by the schedule (1 s +-20%).
        const times = received.map((r) => Number(r.headers['webhook-timestamp']));
        assert.ok((times[2] as number) - (times[0] as number) >= 1, `timestamps ${times.join(', ')}`);

        const [delivery] = await waitForDeliveries(h, subscription, (list) => list[0]?.status === 'succeeded');
        assert.ok(delivery);
        assert.equal(delivery.attemptCount, 3);
        assert.deepEqual(
          delivery.attempts.map((a) => [a.attempt, a.responseStatus]),
          [
            [1, 500],
            [2, 500],
            [3, 200],
          ],
        );
        assert.match(delivery.attempts[0]?.error ?? '', /answered 500/);
        for (const attempt of delivery.attempts) {
          assert.ok(attempt.latencyMs >= 0);
          assert.ok(!Number.isNaN(Date.parse(attempt.attemptedAt)));
        }
      } finally {
        await h.close();
        await receiver.close();
      }
    });

    it('marks a delivery failed when the schedule is exhausted, and delivers it on a manual retry', async () => {
      const h = await createHarness({
        backend,
        env: { ...FAST, WEBHOOK_RETRY_SCHEDULE: '1s', WEBHOOK_TIMEOUT_MS: '300' },
      });
      // First a hang (timeout), then a 503: two attempts, the whole schedule.
      const receiver = await startReceiver((index) => (index === 0 ? 'hang' : 503));
      try {
        const subscription = await subscribe(h, receiver.url);
        assert.equal((await postPlant(h, '{"id": 5, "name": "unlucky"}')).statusCode, 200);
        const [failed] = await waitForDeliveries(h, subscription, (list) => list[0]?.status === 'failed');
        assert.ok(failed);
        assert.equal(failed.attemptCount, 2);
        assert.match(failed.attempts[0]?.error ?? '', /timeout: no response within 300 ms/);
        assert.equal(failed.attempts[0]?.responseStatus, undefined);
        assert.equal(failed.attempts[1]?.responseStatus, 503);
        const filtered = await h.request({
          method: 'GET',
          url: `/webhooks/${subscription.id}/deliveries?status=failed`,
          headers: bearer(h.tokens.admin),
        });
        assert.equal((filtered.json() as Delivery[]).length, 1);

        receiver.respondWith(() => 204);
        const retried = await h.request({
          method: 'POST',
          url: `/webhooks/${subscription.id}/deliveries/${failed.id}/retry`,
          headers: bearer(h.tokens.admin),
        });
        assert.equal(retried.statusCode, 200, retried.body);
        assert.equal((retried.json() as Delivery).status, 'pending');
        const [done] = await waitForDeliveries(h, subscription, (list) => list[0]?.status === 'succeeded');
        assert.deepEqual(
          done?.attempts.map((a) => a.responseStatus ?? null),
          [null, 503, 204],
        );
        const received = await receiver.waitFor((r) => r.length === 3);
        assert.equal(new Set(ids(received)).size, 1, 'a manual retry keeps the webhook-id');
        assert.equal(verifySignature(subscription.secret, received[2] as ReceivedWebhook), '{"id":5,"name":"unlucky"}');
      } finally {
        await h.close();
        await receiver.close();
      }
    });

    it('emits nothing for creates that fail (400, 409) or replay', async () => {
      const h = await createHarness({ backend, env: FAST });
      const receiver = await startReceiver();
      try {
        const subscription = await subscribe(h, receiver.url);
        assert.equal((await postPlant(h, '{"id": 1, "name": "original", "tag": "a"}')).statusCode, 200);
        await receiver.waitFor((r) => r.length === 1);
        assert.equal((await postPlant(h, '{"id": 1, "name": "original", "tag": "a"}')).statusCode, 200, 'replay');
        assert.equal((await postPlant(h, '{"id": 1, "name": "different"}')).statusCode, 409);
        assert.equal((await postPlant(h, '{"id": 2}')).statusCode, 400);
        assert.equal((await postPlant(h, '{"id": 9223372036854775808, "name": "too big"}')).statusCode, 400);
        assert.equal((await postPlant(h, '{"id": 3, "name": "no token"}', 'pst_wrong')).statusCode, 401);
        await sleep(500); // ten poll intervals
        assert.equal(receiver.received.length, 1);
        assert.equal(
          verifySignature(subscription.secret, receiver.received[0] as ReceivedWebhook),
          '{"id":1,"name":"original","tag":"a"}',
        );
        assert.equal((await deliveries(h, subscription)).length, 1);
      } finally {
        await h.close();
        await receiver.close();
      }
    });

    it('writes the plant and its event in one transaction: when the outbox write fails, the plant is not stored', async () => {
      const h = await createHarness({ backend, env: FAST });
      const receiver = await startReceiver();
      try {
        await subscribe(h, receiver.url);
        await execSql(h.databaseUrl, {
          sqlite:
            "CREATE TRIGGER break_outbox BEFORE INSERT ON webhook_deliveries BEGIN SELECT RAISE(ABORT, 'outbox broken'); END;",
          postgres: `CREATE FUNCTION break_outbox() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'outbox broken'; END $$;
                   CREATE TRIGGER break_outbox BEFORE INSERT ON webhook_deliveries FOR EACH ROW EXECUTE FUNCTION break_outbox();`,
        });
        const failed = await postPlant(h, '{"id": 12, "name": "doomed"}');
        assert.ok(failed.statusCode >= 500, `a failed create (got ${failed.statusCode})`);
        const read = await h.request({ method: 'GET', url: '/plants/12', headers: bearer(h.tokens.read) });
        assert.equal(read.statusCode, 404, 'the plant was rolled back with its event');
        await sleep(300);
        assert.equal(receiver.received.length, 0);
      } finally {
        await h.close();
        await receiver.close();
      }
    });

    it('sends nothing more to a deleted subscription', async () => {
      const h = await createHarness({ backend, env: { ...FAST, WEBHOOK_RETRY_SCHEDULE: '1s' } });
      const receiver = await startReceiver(() => 500);
      try {
        const subscription = await subscribe(h, receiver.url);
        assert.equal((await postPlant(h, '{"id": 8, "name": "orphan"}')).statusCode, 200);
        await receiver.waitFor((r) => r.length === 1);
        const deleted = await h.request({
          method: 'DELETE',
          url: `/webhooks/${subscription.id}`,
          headers: bearer(h.tokens.admin),
        });
        assert.equal(deleted.statusCode, 204);
        assert.equal((await postPlant(h, '{"id": 9, "name": "unheard"}')).statusCode, 200);
        await sleep(1600); // past the retry the first delivery would have had
        assert.equal(receiver.received.length, 1);
      } finally {
        await h.close();
        await receiver.close();
      }
    });

    it('refuses, at delivery time, destinations the SSRF policy forbids', async () => {
      // The service now runs with the default policy; the subscriptions were made when private URLs were allowed.
      const h = await createHarness({
        backend,
        env: { WEBHOOK_POLL_INTERVAL_MS: '50', WEBHOOK_RETRY_SCHEDULE: 'none' },
      });
      const receiver = await startReceiver();
      try {
        const port = new URL(receiver.url).port;
        for (const [id, url] of [
          ['whk_literal', receiver.url],
          ['whk_name', `http://localhost:${port}/hooks/plants`],
        ] as const) {
          await h.store.webhooks.insertSubscription({
            id,
            url,
            secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
            eventTypes: ['plant.created'],
            createdAt: new Date(),
          });
        }
        assert.equal((await postPlant(h, '{"id": 10, "name": "ssrf"}')).statusCode, 200);
        for (const id of ['whk_literal', 'whk_name']) {
          const [delivery] = await waitForDeliveries(h, { id, secret: '' }, (list) => list[0]?.status === 'failed');
          assert.match(delivery?.attempts[0]?.error ?? '', /SSRF policy/);
        }
        assert.equal(receiver.received.length, 0);
      } finally {
        await h.close();
        await receiver.close();
      }
    });

    it('records a delivery it cannot sign (a secret damaged in the database) as failed, and keeps running', async () => {
      const h = await createHarness({ backend, env: { ...FAST, WEBHOOK_RETRY_SCHEDULE: 'none' } });
      const receiver = await startReceiver();
      try {
        await h.store.webhooks.insertSubscription({
          id: 'whk_damaged',
          url: receiver.url,
          secret: 'whsec_',
          eventTypes: ['plant.created'],
          createdAt: new Date(),
        });
        const healthy = await subscribe(h, receiver.url);
        assert.equal((await postPlant(h, '{"id": 11, "name": "signed"}')).statusCode, 200);
        const [damaged] = await waitForDeliveries(
          h,
          { id: 'whk_damaged', secret: '' },
          (list) => list[0]?.status === 'failed',
        );
        assert.match(damaged?.attempts[0]?.error ?? '', /cannot sign/);
        const [received] = await receiver.waitFor((r) => r.length === 1);
        assert.equal(verifySignature(healthy.secret, received as ReceivedWebhook), '{"id":11,"name":"signed"}');
      } finally {
        await h.close();
        await receiver.close();
      }
    });
  });
