/**
 * A subscription's tag filter, end to end over HTTP with a real receiver verifying every signature: a plant event
 * reaches it when the plant has the tag after the change or had it before (into, out of, within the tag; the
 * deletion of a plant that had it; an import's creates), never for other tags or none; a PATCH of the filter
 * applies to the events written after it. An unfiltered subscription beside it gets everything.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { assertError } from '../support/assertions.js';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, json, type Harness } from '../support/harness.js';
import { sleep, startReceiver, verifySignature, type ReceivedWebhook, type Receiver } from './receiver.js';
import { subscribeWebhook } from './subscribe.js';

const FAST = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_POLL_INTERVAL_MS: '200', WEBHOOK_TIMEOUT_MS: '1000' };
const ALL_TYPES = ['plant.created', 'plant.updated', 'plant.deleted'];

for (const backend of testBackends())
  describe(`webhook tag filter [${backend.name}]`, () => {
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

    const asAdmin = () => ({ ...json, ...bearer(h.tokens.admin) });
    const subscribe = (body: Record<string, unknown>) => subscribeWebhook(h, body);
    const send = async (method: string, url: string, payload?: string) => {
      const response = await h.request({
        method,
        url,
        headers: { ...json, ...bearer(h.tokens.all) },
        ...(payload === undefined ? {} : { payload }),
      });
      assert.ok(response.statusCode < 300, `${method} ${url}: ${response.statusCode} ${response.body}`);
      return response;
    };
    /** What `path` received, as "type body", each signature verified. */
    const seenAt = (path: string, secret: string, received: readonly ReceivedWebhook[]) =>
      received
        .filter((r) => r.path.endsWith(path))
        .map((r) => `${String(r.headers['webhook-event-type'])} ${verifySignature(secret, r)}`);

    it('checks the tag as /events does, shows it, and PATCH null removes it', async () => {
      for (const tag of ['', 'a'.repeat(101), 'bad\u0007tag', 42]) {
        const response = await h.request({
          method: 'POST',
          url: '/webhooks',
          headers: asAdmin(),
          payload: JSON.stringify({ url: `${receiver.url}/x`, tag }),
        });
        assertError(response, Errors.INVALID_FIELD, 'tag');
      }
      const created = await subscribe({ url: `${receiver.url}/shown`, tag: 'fern' });
      assert.equal(created.tag, 'fern');
      const read = await h.request({ method: 'GET', url: `/webhooks/${created.id}`, headers: asAdmin() });
      assert.equal(read.json<{ tag?: string }>().tag, 'fern');
      const listed = (await h.request({ method: 'GET', url: '/webhooks', headers: asAdmin() })).json<
        { id: string; tag?: string }[]
      >();
      assert.equal(listed.find((s) => s.id === created.id)?.tag, 'fern');
      const changed = await h.request({
        method: 'PATCH',
        url: `/webhooks/${created.id}`,
        headers: asAdmin(),
        payload: '{"tag": "moss"}',
      });
      assert.equal(changed.json<{ tag?: string }>().tag, 'moss');
      assert.equal(changed.headers.etag, '"2"');
      const removed = await h.request({
        method: 'PATCH',
        url: `/webhooks/${created.id}`,
        headers: asAdmin(),
        payload: '{"tag": null}',
      });
      assert.equal(removed.statusCode, 200);
      assert.equal('tag' in removed.json<object>(), false);
      const nullOnCreate = await subscribe({ url: `${receiver.url}/null`, tag: null });
      assert.equal('tag' in nullOnCreate, false);
      for (const id of [created.id, nullOnCreate.id])
        await h.request({ method: 'DELETE', url: `/webhooks/${id}`, headers: asAdmin() });
    });

    it('delivers a plant event only when the plant has the tag after the change or had it before', async () => {
      const fern = await subscribe({ url: `${receiver.url}/fern`, eventTypes: ALL_TYPES, tag: 'fern' });
      const every = await subscribe({ url: `${receiver.url}/every`, eventTypes: ALL_TYPES });

      await send('POST', '/plants', '{"id": 1, "name": "A", "tag": "fern"}'); // created with the tag
      await send('POST', '/plants', '{"id": 2, "name": "B", "tag": "cactus"}'); // another tag
      await send('POST', '/plants', '{"id": 3, "name": "C"}'); // no tag
      await send('PATCH', '/plants/1', '{"name": "A2"}'); // within the tag
      await send('PATCH', '/plants/2', '{"tag": "fern"}'); // into the tag
      await send('PATCH', '/plants/1', '{"tag": "cactus"}'); // out of the tag
      await send('PATCH', '/plants/1', '{"name": "A3"}'); // another tag, which it left
      await send('PATCH', '/plants/3', '{"tag": "moss"}'); // from none to another tag
      await send('DELETE', '/plants/2'); // had the tag
      await send('DELETE', '/plants/3'); // had another tag
      const imported = await h.request({
        method: 'POST',
        url: '/plants/import',
        headers: { 'content-type': 'application/x-ndjson', ...bearer(h.tokens.all) },
        payload: '{"id":10,"name":"D","tag":"fern"}\n{"id":11,"name":"E","tag":"cactus"}\n{"id":12,"name":"F"}\n',
      });
      assert.equal(imported.statusCode, 200, imported.body);

      const expectedFern = [
        'plant.created {"id":1,"name":"A","tag":"fern"}',
        'plant.updated {"id":1,"name":"A2","tag":"fern"}',
        'plant.updated {"id":2,"name":"B","tag":"fern"}',
        'plant.updated {"id":1,"name":"A2","tag":"cactus"}',
        'plant.deleted {"id":2}',
        'plant.created {"id":10,"name":"D","tag":"fern"}',
      ];
      const received = await receiver.waitFor(
        (r) => seenAt('/every', every.secret, r).length >= 13 && seenAt('/fern', fern.secret, r).length >= 6,
      );
      await sleep(500); // anything more would have come by now: the poll interval is 200 ms
      assert.equal(seenAt('/every', every.secret, receiver.received).length, 13);
      assert.deepEqual(seenAt('/fern', fern.secret, receiver.received).sort(), expectedFern.sort());
      assert.ok(received.length >= 19);

      // A new filter applies to the events written from then on.
      const patched = await h.request({
        method: 'PATCH',
        url: `/webhooks/${fern.id}`,
        headers: asAdmin(),
        payload: '{"tag": "cactus"}',
      });
      assert.equal(patched.statusCode, 200, patched.body);
      await send('POST', '/plants', '{"id": 20, "name": "G", "tag": "cactus"}');
      await send('POST', '/plants', '{"id": 21, "name": "H", "tag": "fern"}');
      await h.request({ method: 'PATCH', url: `/webhooks/${fern.id}`, headers: asAdmin(), payload: '{"tag": null}' });
      await send('POST', '/plants', '{"id": 22, "name": "I"}');
      await receiver.waitFor((r) => seenAt('/fern', fern.secret, r).length >= 8);
      await sleep(500);
      assert.deepEqual(seenAt('/fern', fern.secret, receiver.received).slice(6).sort(), [
        'plant.created {"id":20,"name":"G","tag":"cactus"}',
        'plant.created {"id":22,"name":"I"}',
      ]);
      for (const id of [fern.id, every.id])
        await h.request({ method: 'DELETE', url: `/webhooks/${id}`, headers: asAdmin() });
    });
  });
