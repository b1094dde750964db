/** The typed client sets, reads, changes and removes a subscription's throttle, against a listening server. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPlantStoreClient, PlantStoreError, type PlantStoreClient } from '../../packages/client/src/index.js';
import { Errors } from '../../src/http/errors.js';
import { testBackends } from '../support/backends.js';
import { createHarness, type Harness } from '../support/harness.js';
import { listen } from '../client/servers.js';

for (const backend of testBackends())
  describe(`typed client: a webhook throttle [${backend.name}]`, () => {
    let h: Harness;
    let client: PlantStoreClient;
    before(async () => {
      h = await createHarness({ backend, env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: 'none' } });
      client = createPlantStoreClient({ baseUrl: await listen(h), token: h.tokens.all });
    });
    after(() => h.close());

    it('maxPerSecond on create, read, update and removal; out of range is an Error record', async () => {
      const created = await client.createWebhook({ url: 'http://127.0.0.1:9/hook', maxPerSecond: 12 });
      assert.equal(created.maxPerSecond, 12);
      const { webhook, etag } = await client.readWebhook(created.id);
      assert.equal(webhook.maxPerSecond, 12);
      const changed = await client.updateWebhook(created.id, { maxPerSecond: 30 }, { ifMatch: etag });
      assert.ok(changed.kind === 'updated');
      assert.equal(changed.webhook.maxPerSecond, 30);
      const removed = await client.updateWebhook(created.id, { maxPerSecond: null });
      assert.ok(removed.kind === 'updated');
      assert.equal(removed.webhook.maxPerSecond, undefined);
      await assert.rejects(client.createWebhook({ url: 'http://127.0.0.1:9/hook', maxPerSecond: 0 }), (error) => {
        assert.ok(error instanceof PlantStoreError);
        assert.equal(error.error, Errors.INVALID_FIELD.code);
        return true;
      });
    });
  });
