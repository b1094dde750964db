/**
 * The stores' half of secret rotation, on every backend: rotateSecret keeps at most
 * the current and the previous secret, and a claimed delivery carries the previous
 * one only while it has not expired at claim time (times are passed in, so no waiting).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ClaimedDelivery } from '../../src/store/types.js';
import { testBackends, type OpenedTestStore } from '../support/backends.js';
import { selectColumn } from './database.js';

const FIRST = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwdT2lNJ2SfBk=';
const SECOND = 'whsec_c2Vjb25kIHNlY3JldCBmb3Igcm90YXRpb24gdGVzdHMh';
const THIRD = 'whsec_dGhpcmQgc2VjcmV0IGZvciByb3RhdGlvbiB0ZXN0cyEhIQ==';

for (const backend of testBackends())
  describe(`rotating a webhook secret in the store [${backend.name}]`, () => {
    let opened: OpenedTestStore;
    let count = 0;
    before(async () => {
      opened = await backend.open();
    });
    after(() => opened.cleanup());

    /** A fresh subscription (the only one) with one pending delivery, due now. */
    const subscriptionWithDelivery = async (): Promise<string> => {
      for (const subscription of await opened.store.webhooks.listSubscriptions())
        await opened.store.webhooks.deleteSubscription(subscription.id);
      const id = `whk_rotation_${(count += 1)}`;
      await opened.store.webhooks.insertSubscription({
        id,
        url: 'https://example.com/hooks',
        secret: FIRST,
        eventTypes: ['plant.created'],
        createdAt: new Date(),
      });
      assert.equal(
        (await opened.store.plants.createPlant({ id: BigInt(count), name: `plant ${count}` })).kind,
        'created',
      );
      return id;
    };

    /** Claims the delivery as a dispatcher would at `now`; a 1 ms lease lets the next, later claim take it again. */
    const claimAt = async (now: Date): Promise<ClaimedDelivery> => {
      const claimed = await opened.store.webhooks.claimDueDeliveries({
        now,
        limit: 10,
        leaseMs: 1,
        owner: `test:${now.getTime()}`,
      });
      assert.equal(claimed.length, 1);
      return claimed[0] as ClaimedDelivery;
    };

    const storedSecrets = async (id: string) => ({
      secret: (
        await selectColumn(opened.databaseUrl, `SELECT secret FROM webhook_subscriptions WHERE id = '${id}'`)
      )[0],
      previous: (
        await selectColumn(opened.databaseUrl, `SELECT previous_secret FROM webhook_subscriptions WHERE id = '${id}'`)
      )[0],
    });

    it('signs with the new secret, and with the previous one until it expires at claim time', async () => {
      const id = await subscriptionWithDelivery();
      const expiresAt = new Date(Date.now() + 3_600_000);
      assert.equal(await opened.store.webhooks.rotateSecret(id, SECOND, expiresAt), true);

      const during = await claimAt(new Date(expiresAt.getTime() - 1));
      assert.equal(during.secret, SECOND);
      assert.equal(during.previousSecret, FIRST);

      const atExpiry = await claimAt(expiresAt);
      assert.equal(atExpiry.secret, SECOND);
      assert.equal(atExpiry.previousSecret, undefined, 'expired at claim time');
      assert.ok(!('previousSecret' in atExpiry));
    });

    it('keeps no previous secret when there is no overlap', async () => {
      const id = await subscriptionWithDelivery();
      assert.equal(await opened.store.webhooks.rotateSecret(id, SECOND, undefined), true);
      const claimed = await claimAt(new Date());
      assert.equal(claimed.secret, SECOND);
      assert.ok(!('previousSecret' in claimed));
      assert.deepEqual(
        await storedSecrets(id),
        { secret: SECOND, previous: null },
        'the old secret is not kept at all',
      );
    });

    it('rotating again during an overlap replaces the previous secret: never more than two', async () => {
      const id = await subscriptionWithDelivery();
      const later = new Date(Date.now() + 3_600_000);
      assert.equal(await opened.store.webhooks.rotateSecret(id, SECOND, later), true);
      assert.equal(await opened.store.webhooks.rotateSecret(id, THIRD, later), true);
      const claimed = await claimAt(new Date());
      assert.deepEqual([claimed.secret, claimed.previousSecret], [THIRD, SECOND]);
      assert.deepEqual(await storedSecrets(id), { secret: THIRD, previous: SECOND });
    });

    it('answers false for an unknown subscription, changing nothing', async () => {
      const id = await subscriptionWithDelivery();
      assert.equal(
        await opened.store.webhooks.rotateSecret('whk_nobody', SECOND, new Date(Date.now() + 60_000)),
        false,
      );
      assert.deepEqual(await storedSecrets(id), { secret: FIRST, previous: null });
    });

    it('never shows a secret when listing or reading subscriptions', async () => {
      const id = await subscriptionWithDelivery();
      await opened.store.webhooks.rotateSecret(id, SECOND, new Date(Date.now() + 60_000));
      const shown = JSON.stringify([
        await opened.store.webhooks.listSubscriptions(),
        await opened.store.webhooks.getSubscription(id),
      ]);
      for (const secret of [FIRST, SECOND]) assert.ok(!shown.includes(secret.slice('whsec_'.length)), shown);
    });
  });
