/**
 * maxPerSecond end to end: the app on each store with a real receiver (signatures checked with standardwebhooks)
 * and, on PostgreSQL, two service processes sharing one subscription's rate. A throttled subscription's deliveries
 * wait and are all sent, never more than the rate in a second, with no failed attempt; an unthrottled subscription
 * of the same events is not held back by it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { issueToken } from '../../src/tokens/token-service.js';
import { postgresAvailable, postgresBackend, testBackends, type OpenedTestStore } from '../support/backends.js';
import { checkedFetch } from '../support/checked-fetch.js';
import { bearer, createHarness, json, type Harness } from '../support/harness.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { verifySignature } from './receiver.js';
import { subscribeWebhook } from './subscribe.js';
import { ARRIVAL_JITTER_MS, mostInWindow, startRateReceiver, type RateReceiver } from './rate-receiver.js';

const FAST = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_POLL_INTERVAL_MS: '50', WEBHOOK_CONCURRENCY: '8' };
const RATE = 10;
const PLANTS = 35;

function ndjson(from: number, count: number): string {
  let text = '';
  for (let id = from; id < from + count; id += 1) text += `{"id":${id},"name":"throttled ${id}"}\n`;
  return text;
}

/** The rate holds at the receiver: per window (less jitter), and over the whole span. */
function assertRate(receiver: RateReceiver, events: number, rate: number): void {
  assert.ok(
    mostInWindow(receiver.arrivals, 1000 - ARRIVAL_JITTER_MS) <= rate,
    `more than ${rate} arrived within ${1000 - ARRIVAL_JITTER_MS} ms`,
  );
  const span = Math.max(...receiver.arrivals) - Math.min(...receiver.arrivals);
  // `events` at `rate` need ceil(events / rate) runs, a second or more apart.
  const shortest = (Math.ceil(events / rate) - 1) * 1000 - ARRIVAL_JITTER_MS;
  assert.ok(span >= shortest, `${events} events arrived within ${Math.round(span)} ms: faster than ${rate} per second`);
}

for (const backend of testBackends())
  describe(`a throttled subscription [${backend.name}]`, () => {
    let h: Harness;
    let throttledReceiver: RateReceiver;
    let freeReceiver: RateReceiver;
    before(async () => {
      h = await createHarness({ backend, env: FAST });
      throttledReceiver = await startRateReceiver({ sampleEvery: 1 });
      freeReceiver = await startRateReceiver({ sampleEvery: 1 });
    });
    after(async () => {
      await h?.close();
      await throttledReceiver?.close();
      await freeReceiver?.close();
    });

    const subscribe = (body: object) => subscribeWebhook(h, body);

    it('refuses a rate that is not a whole number from 1 to 10000, with an Error record', async () => {
      for (const maxPerSecond of [0, -1, 10_001, 1.5, '5']) {
        const response = await h.request({
          method: 'POST',
          url: '/webhooks',
          headers: { ...json, ...bearer(h.tokens.admin) },
          payload: JSON.stringify({ url: throttledReceiver.url, maxPerSecond }),
        });
        assert.equal(response.statusCode, 400, `${JSON.stringify(maxPerSecond)}: ${response.body}`);
        const error = response.json() as { error: number; message: string };
        assert.equal(error.error, Errors.INVALID_FIELD.code, response.body);
        assert.match(response.body, /maxPerSecond/);
      }
    });

    it('sends every event at most RATE per second, with no failed attempt, while another subscription gets them at once', async () => {
      const throttled = await subscribe({ url: throttledReceiver.url, maxPerSecond: RATE });
      assert.equal(throttled.maxPerSecond, RATE);
      const free = await subscribe({ url: freeReceiver.url, eventTypes: ['plant.created'] });
      const imported = await h.request({
        method: 'POST',
        url: '/plants/import',
        headers: { 'content-type': 'application/x-ndjson', ...bearer(h.tokens.write) },
        payload: ndjson(1, PLANTS),
      });
      assert.equal(imported.statusCode, 200, imported.body);

      await freeReceiver.waitForIds(PLANTS, 20_000);
      assert.ok(
        throttledReceiver.ids.size < PLANTS,
        `the unthrottled subscription had all ${PLANTS} before the throttled one (${throttledReceiver.ids.size})`,
      );
      await throttledReceiver.waitForIds(PLANTS, 30_000);
      assertRate(throttledReceiver, PLANTS, RATE);
      for (const request of throttledReceiver.sample) verifySignature(throttled.secret, request);
      for (const request of freeReceiver.sample) verifySignature(free.secret, request);

      // Waiting for the rate is no attempt: each was sent once, and succeeded (once the last answer is recorded).
      const deadline = Date.now() + 10_000;
      let deliveries: { status: string; attemptCount: number }[] = [];
      do {
        const log = await h.request({
          method: 'GET',
          url: `/webhooks/${throttled.id}/deliveries?limit=1000`,
          headers: bearer(h.tokens.admin),
        });
        deliveries = log.json() as typeof deliveries;
        await new Promise((resolve) => setTimeout(resolve, 50));
      } while (deliveries.some((d) => d.status === 'pending') && Date.now() < deadline);
      assert.equal(deliveries.length, PLANTS);
      assert.deepEqual(
        deliveries.filter((d) => d.status !== 'succeeded' || d.attemptCount !== 1),
        [],
      );
      const read = await h.request({
        method: 'GET',
        url: `/webhooks/${throttled.id}`,
        headers: bearer(h.tokens.admin),
      });
      assert.equal((read.json() as { enabled: boolean }).enabled, true);
    });

    it('changes and removes the rate with PATCH, shown on the subscription', async () => {
      const subscription = await subscribe({ url: `${throttledReceiver.url}?patch`, maxPerSecond: null });
      assert.equal(subscription.maxPerSecond, undefined);
      const patch = (body: object) =>
        h.request({
          method: 'PATCH',
          url: `/webhooks/${subscription.id}`,
          headers: { ...json, ...bearer(h.tokens.admin) },
          payload: JSON.stringify(body),
        });
      const set = await patch({ maxPerSecond: 3 });
      assert.equal(set.statusCode, 200, set.body);
      assert.equal((set.json() as { maxPerSecond?: number }).maxPerSecond, 3);
      assert.equal(set.headers.etag, '"2"');
      const listed = (await h.request({ method: 'GET', url: '/webhooks', headers: bearer(h.tokens.admin) })).json() as {
        id: string;
        maxPerSecond?: number;
      }[];
      assert.equal(listed.find((s) => s.id === subscription.id)?.maxPerSecond, 3);
      assert.equal((await patch({ maxPerSecond: 0 })).statusCode, 400);
      const removed = await patch({ maxPerSecond: null });
      assert.equal(removed.statusCode, 200);
      assert.equal((removed.json() as { maxPerSecond?: number }).maxPerSecond, undefined);
    });
  });

describe('two service instances on PostgreSQL share a subscription rate', { skip: !postgresAvailable() }, () => {
  let opened: OpenedTestStore;
  let receiver: RateReceiver;
  let instances: ServiceProcess[] = [];
  let token: string;

  before(async () => {
    opened = await postgresBackend.open();
    token = (await issueToken(opened.store.tokens, { name: 'operator', scopes: ['plants:write', 'admin'] })).secret;
    receiver = await startRateReceiver({ sampleEvery: 1 });
    const env = {
      DATABASE_URL: opened.databaseUrl,
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '20',
      WEBHOOK_CONCURRENCY: '8',
    };
    instances = await Promise.all([startServiceProcess(env), startServiceProcess(env)]);
  });
  after(async () => {
    await Promise.all(instances.map((instance) => instance.stop()));
    await receiver?.close();
    await opened?.cleanup();
  });

  it('together send at most the rate, every event once', async () => {
    const [a, b] = instances as [ServiceProcess, ServiceProcess];
    const subscribed = await checkedFetch(`${a.url}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, maxPerSecond: RATE }),
    });
    assert.equal(subscribed.status, 201);
    const { secret } = (await subscribed.json()) as { secret: string };
    // Half the events written through each instance: both have due deliveries at once and compete for them.
    const statuses = await Promise.all(
      [a, b].map(async (instance, i) => {
        const response = await checkedFetch(`${instance.url}/plants/import`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
          body: ndjson(1000 + i * 100, 20),
        });
        await response.arrayBuffer();
        return response.status;
      }),
    );
    assert.deepEqual(statuses, [200, 200]);
    await receiver.waitForIds(40, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 500)); // nothing more may come
    assert.equal(receiver.arrivals.length, 40, 'each event once');
    assertRate(receiver, 40, RATE);
    for (const request of receiver.sample) verifySignature(secret, request);
  });
});
