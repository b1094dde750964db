/**
 * POST /webhooks/{id}/test: one signed webhook.test message, its outcome answered at once, verified on a real
 * receiver with the Standard Webhooks library (both secrets during a rotation). Both stores.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { assertError } from '../support/assertions.js';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, json, type Harness } from '../support/harness.js';
import { startReceiver, verifySignature, type Receiver } from './receiver.js';

interface Outcome {
  eventId: string;
  eventType: string;
  succeeded: boolean;
  responseStatus?: number;
  latencyMs: number;
  error?: string;
}

for (const backend of testBackends())
  describe(`test messages [${backend.name}]`, () => {
    let h: Harness;
    let receiver: Receiver;
    before(async () => {
      h = await createHarness({ backend, env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_TIMEOUT_MS: '1000' } });
      receiver = await startReceiver(() => 204);
    });
    after(async () => {
      await h.close();
      await receiver.close();
    });
    const admin = (method: 'POST' | 'PATCH', url: string, body?: unknown) =>
      h.request({
        method,
        url,
        headers: { ...(body === undefined ? {} : json), ...bearer(h.tokens.admin) },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });

    it('sends a signed webhook.test message and answers the outcome at once, enabled or not', async () => {
      const { id, secret } = (await admin('POST', '/webhooks', { url: receiver.url })).json() as {
        id: string;
        secret: string;
      };
      assert.equal((await admin('PATCH', `/webhooks/${id}`, { enabled: false })).statusCode, 200);
      const response = await admin('POST', `/webhooks/${id}/test`);
      assert.equal(response.statusCode, 200, response.body);
      const outcome = response.json() as Outcome;
      assert.equal(outcome.succeeded, true);
      assert.equal(outcome.responseStatus, 204);
      assert.equal(outcome.eventType, 'webhook.test');
      assert.equal(outcome.error, undefined);
      const [received] = receiver.received;
      assert.ok(received);
      assert.equal(received.headers['webhook-event-type'], 'webhook.test');
      assert.equal(received.headers['webhook-id'], outcome.eventId);
      assert.deepEqual(JSON.parse(verifySignature(secret, received)), {
        subscriptionId: id,
        message: 'a test message from Plant Store',
      });
      // Not part of the delivery log.
      const log = await h.request({
        method: 'GET',
        url: `/webhooks/${id}/deliveries`,
        headers: bearer(h.tokens.admin),
      });
      assert.deepEqual(log.json(), []);

      // During a rotation both secrets sign it.
      const rotated = (await admin('POST', `/webhooks/${id}/rotate-secret`, { overlapSeconds: 60 })).json() as {
        secret: string;
      };
      assert.equal(((await admin('POST', `/webhooks/${id}/test`)).json() as Outcome).succeeded, true);
      const second = receiver.received[1];
      assert.ok(second);
      verifySignature(secret, second);
      verifySignature(rotated.secret, second);
    });

    it('reports a refusing receiver as not acknowledged, and an unknown id as 404', async () => {
      const { id } = (await admin('POST', '/webhooks', { url: receiver.url })).json() as { id: string };
      receiver.respondWith(() => 500);
      const outcome = (await admin('POST', `/webhooks/${id}/test`)).json() as Outcome;
      assert.equal(outcome.succeeded, false);
      assert.equal(outcome.responseStatus, 500);
      assert.match(outcome.error ?? '', /answered 500/);
      assertError(await admin('POST', '/webhooks/whk_missing/test'), Errors.WEBHOOK_NOT_FOUND);
    });
  });
