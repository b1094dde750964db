/**
 * Deliveries across a secret rotation, end to end on every store: the app, a real
 * receiver, and signatures checked with the standardwebhooks library as a receiver
 * would. The end of an overlap is reached by moving its expiry into the past in the
 * database, not by waiting.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, json, postPlant, type Harness } from '../support/harness.js';
import { execSql } from './database.js';
import { startReceiver, verifySignature, type Receiver, type ReceivedWebhook } from './receiver.js';
import { subscribeWebhook } from './subscribe.js';

const FAST = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_POLL_INTERVAL_MS: '50', WEBHOOK_TIMEOUT_MS: '1000' };

const verifiesWith = (secret: string, request: ReceivedWebhook): boolean => {
  try {
    verifySignature(secret, request);
    return true;
  } catch {
    return false;
  }
};
const signatureCount = (request: ReceivedWebhook) => String(request.headers['webhook-signature']).split(' ').length;

for (const backend of testBackends())
  describe(`deliveries across a secret rotation [${backend.name}]`, () => {
    let h: Harness;
    let receiver: Receiver;
    let plantId = 0;
    before(async () => {
      h = await createHarness({ backend, env: FAST });
      receiver = await startReceiver();
    });
    after(async () => {
      await h.close();
      await receiver.close();
    });

    /** A new subscription to the receiver, and its secret. */
    const subscribe = () => subscribeWebhook(h, { url: receiver.url });
    const rotate = async (id: string, body: object = {}): Promise<string> => {
      const response = await h.request({
        method: 'POST',
        url: `/webhooks/${id}/rotate-secret`,
        headers: { ...json, ...bearer(h.tokens.admin) },
        payload: JSON.stringify(body),
      });
      assert.equal(response.statusCode, 200, response.body);
      return (response.json() as { secret: string }).secret;
    };
    /** Creates a plant and returns the request that delivered it (found by its body). */
    const deliveredPlant = async (): Promise<ReceivedWebhook> => {
      const id = (plantId += 1);
      assert.equal((await postPlant(h, `{"id": ${id}, "name": "rotation ${id}"}`)).statusCode, 200);
      const all = await receiver.waitFor((received) => received.some((r) => r.body.startsWith(`{"id":${id},`)));
      return all.filter((r) => r.body.startsWith(`{"id":${id},`)).at(-1) as ReceivedWebhook;
    };
    /** Only one subscription at a time, so each plant is delivered once. */
    const only = async (): Promise<{ id: string; secret: string }> => {
      const list = (await h.request({ method: 'GET', url: '/webhooks', headers: bearer(h.tokens.admin) })).json() as {
        id: string;
      }[];
      for (const { id } of list)
        await h.request({ method: 'DELETE', url: `/webhooks/${id}`, headers: bearer(h.tokens.admin) });
      return subscribe();
    };

    it('signs with the new and the old secret during the overlap, and with the new only after it', async () => {
      const { id, secret: old } = await only();
      const fresh = await rotate(id);

      const during = await deliveredPlant();
      assert.equal(signatureCount(during), 2);
      assert.ok(verifiesWith(fresh, during), 'a receiver with the new secret accepts it');
      assert.ok(verifiesWith(old, during), 'a receiver still on the old secret accepts it');

      // The overlap ends: move its expiry into the past rather than wait a day.
      await execSql(h.databaseUrl, {
        sqlite: `UPDATE webhook_subscriptions SET previous_secret_expires_at = ${Date.now() - 1000} WHERE id = '${id}'`,
        postgres: `UPDATE webhook_subscriptions SET previous_secret_expires_at = now() - interval '1 second' WHERE id = '${id}'`,
      });
      const afterwards = await deliveredPlant();
      assert.equal(signatureCount(afterwards), 1);
      assert.ok(verifiesWith(fresh, afterwards));
      assert.ok(!verifiesWith(old, afterwards), 'the old secret no longer verifies');
    });

    it('with overlapSeconds 0 the old secret stops at once', async () => {
      const { id, secret: old } = await only();
      const fresh = await rotate(id, { overlapSeconds: 0 });
      const delivered = await deliveredPlant();
      assert.equal(signatureCount(delivered), 1);
      assert.ok(verifiesWith(fresh, delivered));
      assert.ok(!verifiesWith(old, delivered));
    });

    it('rotating twice during an overlap keeps only the last two secrets', async () => {
      const { id, secret: first } = await only();
      const second = await rotate(id);
      const third = await rotate(id, { overlapSeconds: 600 });
      const delivered = await deliveredPlant();
      assert.equal(signatureCount(delivered), 2);
      assert.ok(verifiesWith(third, delivered));
      assert.ok(verifiesWith(second, delivered));
      assert.ok(!verifiesWith(first, delivered), 'the first secret is gone');
    });

    it('keeps the delivery log of the subscription', async () => {
      const { id } = await only();
      await deliveredPlant();
      await rotate(id);
      const log = (
        await h.request({ method: 'GET', url: `/webhooks/${id}/deliveries`, headers: bearer(h.tokens.admin) })
      ).json() as unknown[];
      assert.equal(log.length, 1);
    });
  });
