/**
 * POST /webhooks/{id}/recover over HTTP: the window's failed deliveries are sent again (once each), progress
 * is readable, the same window answers the same recovery, and bad windows get clear 400s. Both stores.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../src/app.js';
import { Errors } from '../../src/http/errors.js';
import { assertError } from '../support/assertions.js';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, json, postPlant, type Harness } from '../support/harness.js';
import { sleep, startReceiver, verifySignature, type Receiver } from './receiver.js';

const ENV = {
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_POLL_INTERVAL_MS: '50',
  WEBHOOK_TIMEOUT_MS: '1000',
  // One attempt: a refused delivery fails at once.
  WEBHOOK_RETRY_SCHEDULE: 'none',
};
const PLANTS = 12;

interface Recovery {
  id: string;
  status: string;
  requeued: number;
  since: string;
  until: string;
}

for (const backend of testBackends())
  describe(`recovering failed deliveries [${backend.name}]`, () => {
    let h: Harness;
    let receiver: Receiver;
    before(async () => {
      h = await createHarness({ backend, env: ENV });
      receiver = await startReceiver(() => 503);
    });
    after(async () => {
      await h.close();
      await receiver.close();
    });

    const call = (method: 'GET' | 'POST', url: string, body?: unknown) =>
      h.request({
        method,
        url,
        headers: { ...(body === undefined ? {} : json), ...bearer(h.tokens.admin) },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
    const statuses = async (id: string) =>
      ((await call('GET', `/webhooks/${id}/deliveries?limit=1000`)).json() as { status: string }[]).map(
        (d) => d.status,
      );
    const until = async (check: () => Promise<boolean>) => {
      const deadline = Date.now() + 10_000;
      while (!(await check())) {
        if (Date.now() > deadline) throw new Error('condition not met within 10 s');
        await sleep(20);
      }
    };

    it('sends every failed delivery of the window again, once; the same window answers the same recovery', async () => {
      const subscribed = await call('POST', '/webhooks', { url: receiver.url });
      const { id, secret } = subscribed.json() as { id: string; secret: string };
      const since = new Date(Date.now() - 60_000).toISOString();
      for (let i = 0; i < PLANTS; i += 1)
        assert.equal((await postPlant(h, `{"id": ${i + 1}, "name": "Lost ${i}"}`)).statusCode, 200);
      await until(async () => {
        const list = await statuses(id);
        return list.length === PLANTS && list.every((s) => s === 'failed');
      });

      receiver.respondWith(() => 200);
      const started = await call('POST', `/webhooks/${id}/recover`, { since });
      assert.equal(started.statusCode, 202, started.body);
      const recovery = started.json() as Recovery;
      assert.match(recovery.id, /^rcv_[0-9a-f]{24}$/);
      assert.equal(started.headers.location, `/webhooks/${id}/recoveries/${recovery.id}`);
      assert.equal(recovery.since, since);

      await until(
        async () => ((await call('GET', started.headers.location as string)).json() as Recovery).status === 'done',
      );
      const done = (await call('GET', started.headers.location as string)).json() as Recovery;
      assert.equal(done.requeued, PLANTS);
      await until(async () => (await statuses(id)).every((s) => s === 'succeeded'));
      const acknowledged = receiver.received.filter((r) => r.answered === 200);
      assert.equal(acknowledged.length, PLANTS);
      for (const request of acknowledged) verifySignature(secret, request);
      assert.equal(new Set(acknowledged.map((r) => String(r.headers['webhook-id']))).size, PLANTS);

      // Again for the same window: the same recovery, nothing sent twice.
      const again = await call('POST', `/webhooks/${id}/recover`, { since });
      assert.equal(again.statusCode, 202);
      assert.equal((again.json() as Recovery).id, recovery.id);
      assert.equal((again.json() as Recovery).requeued, PLANTS);
      await sleep(200);
      assert.equal(receiver.received.filter((r) => r.answered === 200).length, PLANTS);

      // A window that holds none of them re-queues nothing.
      const empty = await call('POST', `/webhooks/${id}/recover`, {
        since: new Date(Date.parse(since) - 60_000).toISOString(),
        until: since,
      });
      assert.equal(empty.statusCode, 202, empty.body);
      await until(
        async () => ((await call('GET', empty.headers.location as string)).json() as Recovery).status === 'done',
      );
      assert.equal(((await call('GET', empty.headers.location as string)).json() as Recovery).requeued, 0);
    });

    it('an interrupted recovery (left running, not advanced for 30 s) is continued by the next instance that starts', async () => {
      receiver.respondWith(() => 503);
      const subscribed = await call('POST', '/webhooks', { url: receiver.url });
      const { id } = subscribed.json() as { id: string };
      const since = new Date(Date.now() - 60_000);
      for (let i = 0; i < PLANTS; i += 1)
        assert.equal((await postPlant(h, `{"id": ${1000 + i}, "name": "Interrupted ${i}"}`)).statusCode, 200);
      await until(async () => {
        const list = await statuses(id);
        return list.length === PLANTS && list.every((s) => s === 'failed');
      });
      receiver.respondWith(() => 200);
      // As an instance that stopped right after starting it would leave it: running, last advanced 40 s ago.
      const started = await h.store.webhooks.startRecovery({
        id: `rcv_${randomBytes(12).toString('hex')}`,
        subscriptionId: id,
        since,
        until: new Date(),
        windowKey: 'interrupted',
        now: new Date(Date.now() - 40_000),
      });
      assert.equal(started?.recovery.status, 'running');
      const recoveryId = started?.recovery.id as string;

      // Another instance on the same store: its start sweeps for interrupted recoveries and continues this one.
      const restarted = await buildApp(h.config, { store: h.store, logStream: new PassThrough() });
      try {
        await until(async () => (await h.store.webhooks.getRecovery(id, recoveryId))?.status === 'done');
        assert.equal((await h.store.webhooks.getRecovery(id, recoveryId))?.requeued, PLANTS);
        await until(async () => (await statuses(id)).every((s) => s === 'succeeded'));
      } finally {
        await restarted.close();
      }
    });

    it('refuses windows it cannot recover, and unknown ids, with clear errors', async () => {
      const { id } = (await call('POST', '/webhooks', { url: receiver.url })).json() as { id: string };
      const now = Date.now();
      assertError(await call('POST', `/webhooks/${id}/recover`, {}), Errors.INVALID_FIELD, 'since');
      assertError(await call('POST', `/webhooks/${id}/recover`, { since: 'yesterday' }), Errors.INVALID_FIELD, 'since');
      assertError(
        await call('POST', `/webhooks/${id}/recover`, { since: new Date(now - 31 * 86_400_000).toISOString() }),
        Errors.INVALID_FIELD,
        'within the last 30 days',
      );
      assertError(
        await call('POST', `/webhooks/${id}/recover`, {
          since: new Date(now - 1000).toISOString(),
          until: new Date(now + 3_600_000).toISOString(),
        }),
        Errors.INVALID_FIELD,
        'until must not be in the future',
      );
      assertError(
        await call('POST', `/webhooks/${id}/recover`, {
          since: new Date(now - 1000).toISOString(),
          until: new Date(now - 2000).toISOString(),
        }),
        Errors.INVALID_FIELD,
        'since must be before until',
      );
      assertError(
        await call('POST', '/webhooks/whk_missing/recover', { since: new Date(now - 1000).toISOString() }),
        Errors.WEBHOOK_NOT_FOUND,
      );
      assertError(await call('GET', `/webhooks/${id}/recoveries/rcv_missing`), Errors.WEBHOOK_RECOVERY_NOT_FOUND);
    });
  });
