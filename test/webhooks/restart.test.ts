/**
 * The outbox survives the process: events whose delivery is pending when the service
 * crashes or stops are delivered by the next one. Real processes (`plantstore serve`).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { issueToken } from '../../src/tokens/token-service.js';
import { testBackends, type OpenedTestStore } from '../support/backends.js';
import { startServiceProcess } from '../support/service-process.js';
import { startReceiver, verifySignature, type Receiver, type ReceivedWebhook } from './receiver.js';
import { checkedFetch } from '../support/checked-fetch.js';

async function call(
  url: string,
  token: string,
  method: string,
  path: string,
  body?: string,
): Promise<{ status: number; text: string }> {
  const response = await checkedFetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body,
  });
  return { status: response.status, text: await response.text() };
}

async function setUp(opened: OpenedTestStore): Promise<string> {
  return (await issueToken(opened.store.tokens, { name: 'operator', scopes: ['plants:read', 'plants:write', 'admin'] }))
    .secret;
}

async function subscribe(url: string, token: string, receiver: Receiver): Promise<{ id: string; secret: string }> {
  const created = await call(url, token, 'POST', '/webhooks', JSON.stringify({ url: receiver.url }));
  assert.equal(created.status, 201, created.text);
  return JSON.parse(created.text) as { id: string; secret: string };
}

interface Delivery {
  status: string;
  attemptCount: number;
  attempts: { attempt: number; responseStatus?: number; error?: string }[];
}

async function waitForLog(
  url: string,
  token: string,
  subscriptionId: string,
  done: (log: Delivery[]) => boolean,
): Promise<Delivery[]> {
  let log: Delivery[] = [];
  for (let i = 0; i < 150; i += 1) {
    log = JSON.parse((await call(url, token, 'GET', `/webhooks/${subscriptionId}/deliveries`)).text) as Delivery[];
    if (done(log)) return log;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`delivery log did not settle: ${JSON.stringify(log)}`);
}

const webhookIds = (received: readonly ReceivedWebhook[]) =>
  new Set(received.map((r) => String(r.headers['webhook-id'])));
const acknowledged = (received: readonly ReceivedWebhook[]) => webhookIds(received.filter((r) => r.answered === 200));

for (const backend of testBackends())
  describe(`webhooks across restarts [${backend.name}]`, () => {
    const env = (opened: OpenedTestStore, extra: Record<string, string> = {}) => ({
      DATABASE_URL: opened.databaseUrl,
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '100',
      ...extra,
    });

    it('delivers events still pending when the service was killed (kill -9), after it restarts', async () => {
      const opened = await backend.open();
      const receiver = await startReceiver(() => 503);
      try {
        const token = await setUp(opened);
        const settings = env(opened, { WEBHOOK_RETRY_SCHEDULE: '2s,2s,2s,2s,2s' });
        const service = await startServiceProcess(settings);
        const subscription = await subscribe(service.url, token, receiver);
        const ids = ['9223372036854775807', '-1', '9007199254740993'];
        for (const id of ids)
          assert.equal(
            (await call(service.url, token, 'POST', '/plants', `{"id": ${id}, "name": "plant ${id}"}`)).status,
            200,
          );
        // Every event had its first attempt refused, and recorded: all three are pending
        // (none in flight, whose lease would first have to expire) when the process dies.
        await receiver.waitFor((r) => webhookIds(r).size === 3);
        await waitForLog(
          service.url,
          token,
          subscription.id,
          (log) => log.length === 3 && log.every((d) => d.status === 'pending' && d.attemptCount >= 1),
        );
        assert.equal(await service.stop('SIGKILL'), 'SIGKILL');
        const beforeRestart = webhookIds(receiver.received);

        receiver.respondWith(() => 200);
        const restarted = await startServiceProcess(settings);
        try {
          const received = await receiver.waitFor((r) => acknowledged(r).size === 3, 15_000);
          assert.deepEqual(acknowledged(received), beforeRestart, 'the same webhook-ids, after the restart');
          const bodies = received.filter((r) => r.answered === 200).map((r) => verifySignature(subscription.secret, r));
          assert.deepEqual(bodies.sort(), ids.map((id) => `{"id":${id},"name":"plant ${id}"}`).sort());
        } finally {
          await restarted.stop();
        }
      } finally {
        await receiver.close();
        await opened.cleanup();
      }
    });

    it('on SIGTERM, interrupts a delivery in flight and releases it; the next process delivers it', async () => {
      const opened = await backend.open();
      // The subscriber never answers the first request: the delivery is in flight at shutdown.
      const receiver = await startReceiver((index) => (index === 0 ? 'hang' : 200));
      try {
        const token = await setUp(opened);
        const settings = env(opened, { WEBHOOK_RETRY_SCHEDULE: '1h', WEBHOOK_TIMEOUT_MS: '60000' });
        const service = await startServiceProcess(settings);
        const subscription = await subscribe(service.url, token, receiver);
        assert.equal(
          (await call(service.url, token, 'POST', '/plants', '{"id": 42, "name": "in flight"}')).status,
          200,
        );
        await receiver.waitFor((r) => r.length === 1);
        // Exits cleanly without waiting out the 60 s timeout or the 1 h retry delay.
        assert.equal(await service.stop('SIGTERM'), 0);

        const restarted = await startServiceProcess(settings);
        try {
          const received = await receiver.waitFor((r) => r.length === 2, 15_000);
          assert.equal(received[1]?.headers['webhook-id'], received[0]?.headers['webhook-id']);
          assert.equal(
            verifySignature(subscription.secret, received[1] as ReceivedWebhook),
            '{"id":42,"name":"in flight"}',
          );

          const [delivery] = await waitForLog(
            restarted.url,
            token,
            subscription.id,
            (log) => log[0]?.status === 'succeeded',
          );
          assert.ok(delivery);
          assert.equal(delivery.attemptCount, 1, 'the interrupted attempt does not use up the schedule');
          assert.match(delivery.attempts[0]?.error ?? '', /interrupted/);
          assert.deepEqual(delivery.attempts[1], { ...delivery.attempts[1], attempt: 1, responseStatus: 200 });
        } finally {
          await restarted.stop();
        }
      } finally {
        await receiver.close();
        await opened.cleanup();
      }
    });
  });
