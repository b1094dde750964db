/**
 * The typed client's webhook operations against a real listening server: subscribe, read with the ETag,
 * change conditionally (412 as an outcome), disable, the delivery log, retry and recovery.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPlantStoreClient, PlantStoreError, type PlantStoreClient } from '../../packages/client/src/index.js';
import { Errors } from '../../src/http/errors.js';
import { createHarness, type Harness } from '../support/harness.js';
import { listen } from '../client/servers.js';

describe('typed client: webhooks', () => {
  let h: Harness;
  let client: PlantStoreClient;
  before(async () => {
    // Retries far apart: the deliveries to the closed port below stay as the test leaves them.
    h = await createHarness({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: 'none' } });
    client = createPlantStoreClient({ baseUrl: await listen(h), token: h.tokens.all });
  });
  after(() => h.close());

  it('subscribes, reads, changes conditionally, disables, lists and deletes', async () => {
    const created = await client.createWebhook({ url: 'http://127.0.0.1:9/hook', eventTypes: ['plant.created'] });
    assert.match(created.secret, /^whsec_/);
    assert.equal(created.enabled, true);
    const { webhook, etag } = await client.readWebhook(created.id);
    assert.equal(etag, '"1"');
    assert.equal(webhook.url, 'http://127.0.0.1:9/hook');

    const changed = await client.updateWebhook(created.id, { description: 'moved', enabled: false }, { ifMatch: etag });
    assert.equal(changed.kind, 'updated');
    assert.ok(changed.kind === 'updated');
    assert.equal(changed.etag, '"2"');
    assert.equal(changed.webhook.enabled, false);
    assert.equal(changed.webhook.disabledReason, 'disabled by hand');

    // The tag filter: set, shown, removed with null.
    const filtered = await client.updateWebhook(created.id, { tag: 'fern' });
    assert.ok(filtered.kind === 'updated');
    assert.equal(filtered.webhook.tag, 'fern');
    const unfiltered = await client.updateWebhook(created.id, { tag: null });
    assert.ok(unfiltered.kind === 'updated');
    assert.equal(unfiltered.webhook.tag, undefined);
    const withTag = await client.createWebhook({ url: 'http://127.0.0.1:9/tagged', tag: 'moss' });
    assert.equal((await client.readWebhook(withTag.id)).webhook.tag, 'moss');
    await client.deleteWebhook(withTag.id);

    const stale = await client.updateWebhook(created.id, { enabled: true }, { ifMatch: etag });
    assert.equal(stale.kind, 'precondition-failed');
    assert.ok(stale.kind === 'precondition-failed');
    assert.equal(stale.error.error, Errors.PRECONDITION_FAILED.code);

    assert.deepEqual(
      (await client.listWebhooks()).map((w) => [w.id, w.enabled]),
      [[created.id, false]],
    );
    await client.deleteWebhook(created.id);
    await assert.rejects(client.readWebhook(created.id), (error: unknown) => {
      assert.ok(error instanceof PlantStoreError);
      assert.equal(error.error, Errors.WEBHOOK_NOT_FOUND.code);
      return true;
    });
  });

  it('reads the delivery log, retries a delivery and recovers a window', async () => {
    const since = new Date(Date.now() - 60_000).toISOString();
    const { id } = await client.createWebhook({ url: 'http://127.0.0.1:9/hook' });
    await client.createPlant({ id: 77n, name: 'Unheard' });
    let deliveries = await client.listWebhookDeliveries(id);
    for (let i = 0; i < 200 && deliveries[0]?.status !== 'failed'; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      deliveries = await client.listWebhookDeliveries(id, { status: 'failed' });
    }
    const [failed] = deliveries;
    assert.equal(failed?.status, 'failed');
    assert.ok(failed);
    assert.equal(failed.plantId, 77n);
    assert.equal(failed.plantName, 'Unheard');
    assert.deepEqual(
      (await client.listWebhookDeliveries(id, { plantId: 77n, eventId: failed.eventId })).map((d) => d.id),
      [failed.id],
    );
    assert.deepEqual(await client.listWebhookDeliveries(id, { plantId: 78n }), []);
    assert.equal((await client.retryWebhookDelivery(id, failed.id)).status, 'pending');

    const recovery = await client.recoverWebhook(id, { since });
    assert.match(recovery.id, /^rcv_/);
    const read = await client.getWebhookRecovery(id, recovery.id);
    assert.equal(read.id, recovery.id);
    assert.equal((await client.recoverWebhook(id, { since })).id, recovery.id, 'the same window, the same recovery');

    const tested = await client.testWebhook(id);
    assert.equal(tested.succeeded, false, 'nothing listens on port 9');
    assert.match(tested.error ?? '', /ECONNREFUSED/);
    assert.deepEqual(
      (await client.listWebhookEventTypes()).map((e) => e.type),
      ['plant.created', 'plant.updated', 'plant.deleted', 'webhook.disabled'],
    );
  });
});
