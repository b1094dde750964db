/**
 * plant.updated and plant.deleted reach the subscriptions that chose them, end to
 * end over HTTP (a real receiver), signed, with their type in webhook-event-type;
 * a subscription without eventTypes still gets plant.created only; no event for a
 * change that changed nothing or was refused. And the subscription API checks eventTypes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { assertError } from '../support/assertions.js';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, json, type Harness } from '../support/harness.js';
import { sleep, startReceiver, verifySignature, type Receiver } from './receiver.js';
import { subscribeWebhook } from './subscribe.js';

const FAST = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_POLL_INTERVAL_MS: '5000', WEBHOOK_TIMEOUT_MS: '1000' };

for (const backend of testBackends())
  describe(`change events [${backend.name}]`, () => {
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

    const subscribe = (body: Record<string, unknown>) => subscribeWebhook(h, body);
    const send = (method: string, url: string, payload?: string, headers: Record<string, string> = {}) =>
      h.request({
        method,
        url,
        headers: { ...json, ...bearer(h.tokens.all), ...headers },
        ...(payload === undefined ? {} : { payload }),
      });

    it('checks eventTypes: known types, at least one, each once', async () => {
      const headers = { ...json, ...bearer(h.tokens.admin) };
      for (const [eventTypes, message] of [
        [['plant.exploded'], 'eventTypes.0 must be one of'],
        [[], 'eventTypes must'],
        [['plant.created', 'plant.created'], 'eventTypes must'],
      ] as const) {
        const response = await h.request({
          method: 'POST',
          url: '/webhooks',
          headers,
          payload: JSON.stringify({ url: `${receiver.url}/x`, eventTypes }),
        });
        assertError(response, Errors.INVALID_FIELD, message);
      }
      const plain = await subscribe({ url: `${receiver.url}/plain` });
      assert.deepEqual(plain.eventTypes, ['plant.created']);
      const listed = (
        await h.request({ method: 'GET', url: `/webhooks/${plain.id}`, headers: bearer(h.tokens.admin) })
      ).json<{ eventTypes: string[] }>();
      assert.deepEqual(listed.eventTypes, ['plant.created']);
      await h.request({ method: 'DELETE', url: `/webhooks/${plain.id}`, headers: bearer(h.tokens.admin) });
    });

    it('delivers each change to the subscriptions of its type, at once (the write nudges the dispatcher), and nothing for no-ops or refusals', async () => {
      const all = await subscribe({
        url: `${receiver.url}/all`,
        eventTypes: ['plant.deleted', 'plant.created', 'plant.updated'],
      });
      assert.deepEqual(all.eventTypes, ['plant.created', 'plant.updated', 'plant.deleted']);
      const created = await subscribe({ url: `${receiver.url}/created` });

      const id = '9223372036854775806';
      const first = await send('POST', '/plants', `{"id": ${id}, "name": "Ivy", "tag": "climber"}`);
      assert.equal(first.statusCode, 200);
      assert.equal((await send('PATCH', `/plants/${id}`, '{"tag": null}')).statusCode, 200);
      assert.equal((await send('PATCH', `/plants/${id}`, '{"tag": null}')).statusCode, 200); // changes nothing
      assert.equal(
        (await send('PUT', `/plants/${id}`, '{"name": "Ivy"}', { 'if-match': String(first.headers.etag) })).statusCode,
        412,
      );
      assert.equal((await send('DELETE', `/plants/${id}`)).statusCode, 204);
      assert.equal((await send('DELETE', `/plants/${id}`)).statusCode, 404);

      // The poll interval is 5 s: what arrives sooner came from the nudges.
      const received = await receiver.waitFor((r) => r.length >= 4, 4000);
      await sleep(300);
      assert.equal(
        receiver.received.length,
        4,
        JSON.stringify(receiver.received.map((r) => [r.path, r.headers['webhook-event-type']])),
      );
      const seen = received.map((r) => {
        const to = r.path.endsWith('/all') ? '/all' : '/created';
        return `${to} ${String(r.headers['webhook-event-type'])} ${verifySignature(to === '/all' ? all.secret : created.secret, r)}`;
      });
      assert.deepEqual(
        seen.sort(),
        [
          `/all plant.created {"id":${id},"name":"Ivy","tag":"climber"}`,
          `/all plant.deleted {"id":${id}}`,
          `/all plant.updated {"id":${id},"name":"Ivy"}`,
          `/created plant.created {"id":${id},"name":"Ivy","tag":"climber"}`,
        ].sort(),
      );
    });
  });
