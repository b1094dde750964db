/**
 * webhook.disabled, end to end on a running service: a subscription whose attempts all fail for
 * WEBHOOK_DISABLE_AFTER is disabled, and its event reaches (signed) the other subscriptions that chose the type,
 * whatever their tag filter, and no subscription that did not; GET /events carries it to streams whose `types`
 * names it, and not to a stream without `types`. Once per disable. Runs on every store backend.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, json, type Harness } from '../support/harness.js';
import { listen } from '../client/servers.js';
import { openStream } from '../events/sse-client.js';
import { sleep, startReceiver, verifySignature, type Receiver } from './receiver.js';
import { subscribeWebhook } from './subscribe.js';

const ENV = {
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_POLL_INTERVAL_MS: '50',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_RETRY_SCHEDULE: '100ms,100ms,100ms,100ms,100ms,100ms,100ms,100ms',
  WEBHOOK_DISABLE_AFTER: '300ms',
};

for (const backend of testBackends())
  describe(`webhook.disabled [${backend.name}]`, () => {
    let h: Harness;
    let url: string;
    let failing: Receiver;
    let healthy: Receiver;
    before(async () => {
      h = await createHarness({ backend, env: ENV });
      url = await listen(h);
      failing = await startReceiver(() => 503);
      healthy = await startReceiver(() => 204);
    });
    after(async () => {
      await h.close();
      await failing.close();
      await healthy.close();
    });

    const subscribe = (body: Record<string, unknown>) => subscribeWebhook(h, body);

    it('is listed in the event types and the webhooks section', async () => {
      const types = await h.request({ method: 'GET', url: '/webhooks/event-types', headers: bearer(h.tokens.admin) });
      const entry = types
        .json<{ type: string; schema: { required?: string[] } }[]>()
        .find((t) => t.type === 'webhook.disabled');
      assert.deepEqual(entry?.schema.required, ['id', 'url', 'disabledAt', 'disabledReason']);
      const document = (await h.request({ method: 'GET', url: '/openapi.json' })).json<{
        webhooks: Record<string, unknown>;
      }>();
      assert.ok('webhook.disabled' in document.webhooks);
    });

    it('goes, once and signed, to the other subscriptions that chose it, and to the streams that name it', async () => {
      const plainStream = await openStream(`${url}/events`, h.tokens.read);
      const typedStream = await openStream(`${url}/events?types=webhook.disabled`, h.tokens.read);
      const taggedStream = await openStream(
        `${url}/events?types=webhook.disabled,plant.created&tag=fern`,
        h.tokens.read,
      );
      const down = await subscribe({ url: `${failing.url}/down`, eventTypes: ['plant.created', 'webhook.disabled'] });
      // A tag filter does not apply to an event about no plant.
      const watcher = await subscribe({ url: `${healthy.url}/watch`, eventTypes: ['webhook.disabled'], tag: 'fern' });
      await subscribe({ url: `${healthy.url}/plain` }); // plant.created only: never webhook.disabled

      const created = await h.request({
        method: 'POST',
        url: '/plants',
        headers: { ...json, ...bearer(h.tokens.write) },
        payload: '{"id": 7, "name": "Unheard"}',
      });
      assert.equal(created.statusCode, 200, created.body);

      const isDisabled = (r: { headers: Record<string, unknown> }) =>
        r.headers['webhook-event-type'] === 'webhook.disabled';
      const [event] = (await healthy.waitFor((r) => r.some(isDisabled), 15_000)).filter(isDisabled);
      assert.ok(event);
      assert.ok(event.path.endsWith('/watch'));
      const state = (
        await h.request({ method: 'GET', url: `/webhooks/${down.id}`, headers: bearer(h.tokens.admin) })
      ).json<{ enabled: boolean; disabledAt: string; disabledReason: string }>();
      assert.equal(state.enabled, false);
      assert.deepEqual(JSON.parse(verifySignature(watcher.secret, event)), {
        id: down.id,
        url: down.url,
        disabledAt: state.disabledAt,
        disabledReason: state.disabledReason,
      });
      assert.match(state.disabledReason, /every delivery attempt failed for 300ms/);

      const [typed] = await typedStream.waitFor(1, (m) => m.event === 'webhook.disabled');
      assert.equal(typed?.data, event.body);
      const [tagged] = await taggedStream.waitFor(1, (m) => m.event === 'webhook.disabled');
      assert.equal(tagged?.data, event.body);
      await plainStream.waitFor(1, (m) => m.event === 'plant.created');

      await sleep(600); // more failed attempts would have come by now, and with them any second event
      assert.equal(healthy.received.filter(isDisabled).length, 1);
      assert.deepEqual(
        healthy.received.filter((r) => r.path.endsWith('/plain')).map((r) => r.headers['webhook-event-type']),
        ['plant.created'],
      );
      assert.equal(failing.received.filter(isDisabled).length, 0);
      const ownLog = await h.request({
        method: 'GET',
        url: `/webhooks/${down.id}/deliveries`,
        headers: bearer(h.tokens.admin),
      });
      assert.deepEqual(
        ownLog.json<{ eventType: string }[]>().map((d) => d.eventType),
        ['plant.created'],
        'no event about itself is queued for the disabled subscription',
      );
      assert.equal(typedStream.messages.filter((m) => m.event === 'webhook.disabled').length, 1);
      assert.deepEqual(
        plainStream.messages.filter((m) => m.event !== undefined).map((m) => m.event),
        ['plant.created'],
      );
      assert.deepEqual(
        taggedStream.messages.filter((m) => m.event !== undefined).map((m) => m.event),
        ['webhook.disabled'],
      );
      for (const stream of [plainStream, typedStream, taggedStream]) stream.close();
    });
  });
