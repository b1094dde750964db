/**
 * Changing a subscription in place (PATCH /webhooks/{id}): each property, the version ETag and If-Match, the
 * same checks as on subscribing, and a disabled subscription whose events wait and then arrive, verified with
 * the Standard Webhooks library on a real receiver. Runs on every store backend.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { assertError } from '../support/assertions.js';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, json, postPlant, type Harness } from '../support/harness.js';
import { sleep, startReceiver, verifySignature, type Receiver } from './receiver.js';
import { subscribeWebhook } from './subscribe.js';

const FAST = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_POLL_INTERVAL_MS: '50', WEBHOOK_TIMEOUT_MS: '1000' };

interface Shown {
  id: string;
  url: string;
  description?: string;
  eventTypes: string[];
  enabled: boolean;
  disabledAt?: string;
  disabledReason?: string;
  createdAt: string;
  secret?: string;
}

interface Delivery {
  eventId: string;
  status: string;
}

for (const backend of testBackends())
  describe(`changing a webhook subscription [${backend.name}]`, () => {
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

    const subscribe = (body: object) => subscribeWebhook(h, body);
    const patch = (id: string, body: unknown, headers: Record<string, string> = {}) =>
      h.request({
        method: 'PATCH',
        url: `/webhooks/${id}`,
        headers: { 'content-type': 'application/merge-patch+json', ...bearer(h.tokens.admin), ...headers },
        payload: JSON.stringify(body),
      });
    const read = (id: string) => h.request({ method: 'GET', url: `/webhooks/${id}`, headers: bearer(h.tokens.admin) });
    const deliveries = async (id: string): Promise<Delivery[]> => {
      const response = await h.request({
        method: 'GET',
        url: `/webhooks/${id}/deliveries?limit=1000`,
        headers: bearer(h.tokens.admin),
      });
      assert.equal(response.statusCode, 200, response.body);
      return response.json() as Delivery[];
    };

    it('changes url, description and event types in place, keeping the id and secret; the ETag counts changes', async () => {
      const created = await subscribe({ url: 'https://93.184.216.34/a', description: 'first' });
      assert.equal(created.enabled, true);
      const first = await read(created.id);
      assert.equal(first.headers.etag, '"1"');

      const changed = await patch(created.id, {
        url: 'HTTPS://93.184.216.34/x/../b',
        description: 'second',
        eventTypes: ['plant.deleted', 'plant.created'],
        ignored: true,
      });
      assert.equal(changed.statusCode, 200, changed.body);
      assert.equal(changed.headers.etag, '"2"');
      const body = changed.json() as Shown;
      assert.equal(body.id, created.id);
      // Normalised as on subscribing; types once each, in the catalogue's order.
      assert.equal(body.url, 'https://93.184.216.34/b');
      assert.equal(body.description, 'second');
      assert.deepEqual(body.eventTypes, ['plant.created', 'plant.deleted']);
      assert.equal(body.secret, undefined, 'the secret is never shown again');
      assert.equal(body.createdAt, created.createdAt);
      assert.deepEqual((await read(created.id)).json(), body);

      // Nothing changes: same version, same answer.
      const same = await patch(created.id, { description: 'second', eventTypes: ['plant.created', 'plant.deleted'] });
      assert.equal(same.statusCode, 200, same.body);
      assert.equal(same.headers.etag, '"2"');

      // null removes the description; application/json is accepted too.
      const removed = await h.request({
        method: 'PATCH',
        url: `/webhooks/${created.id}`,
        headers: { ...json, ...bearer(h.tokens.admin) },
        payload: '{"description": null}',
      });
      assert.equal(removed.statusCode, 200, removed.body);
      assert.equal((removed.json() as Shown).description, undefined);
      assert.equal(removed.headers.etag, '"3"');
    });

    it('conditional on If-Match: a stale ETag is refused with 412 and nothing changes; of two writers with one ETag, one wins', async () => {
      const { id } = await subscribe({ url: 'https://93.184.216.34/c' });
      assertError(
        await patch(id, { description: 'x' }, { 'if-match': '"7"' }),
        Errors.PRECONDITION_FAILED,
        'is at version "1"',
      );
      assert.equal((await read(id)).headers.etag, '"1"');
      assert.equal(
        (await patch(id, { description: 'x' }, { 'if-match': 'W/"1"' })).statusCode,
        412,
        'weak never matches',
      );
      assert.equal((await patch(id, { description: 'x' }, { 'if-match': '*' })).statusCode, 200);

      const racers = await Promise.all(
        ['one', 'two', 'three'].map((description) => patch(id, { description }, { 'if-match': '"2"' })),
      );
      assert.deepEqual(racers.map((r) => r.statusCode).sort(), [200, 412, 412]);
      const winner = racers.find((r) => r.statusCode === 200);
      assert.deepEqual((await read(id)).json(), winner?.json());
      assert.equal((await read(id)).headers.etag, '"3"');

      assertError(await patch('whk_missing', { description: 'x' }), Errors.WEBHOOK_NOT_FOUND, 'whk_missing');
      assertError(
        await patch('whk_missing', { description: 'x' }, { 'if-match': '"1"' }),
        Errors.PRECONDITION_FAILED,
        'no subscription has id whk_missing',
      );
    });

    it('checks a new URL and the body as on subscribing: clear 400s, nothing changed', async () => {
      const { id } = await subscribe({ url: 'https://93.184.216.34/d' });
      assertError(await patch(id, { url: 'ftp://93.184.216.34/' }), Errors.INVALID_WEBHOOK_URL, 'http or https');
      assertError(await patch(id, { url: 'https://u:p@93.184.216.34/' }), Errors.INVALID_WEBHOOK_URL, 'credentials');
      assertError(await patch(id, { enabled: 'no' }), Errors.INVALID_FIELD, 'enabled');
      assertError(await patch(id, { eventTypes: [] }), Errors.INVALID_FIELD, 'eventTypes');
      assertError(await patch(id, { eventTypes: ['plant.eaten'] }), Errors.INVALID_FIELD, 'eventTypes');
      assertError(await patch(id, { description: '' }), Errors.INVALID_FIELD, 'description');
      assertError(await patch(id, { url: null }), Errors.INVALID_FIELD, 'url');
      assert.equal((await read(id)).headers.etag, '"1"');
      assertError(
        await h.request({ method: 'PATCH', url: `/webhooks/${id}`, headers: bearer(h.tokens.write), payload: {} }),
        Errors.INSUFFICIENT_SCOPE,
        'admin',
      );
    });

    it('a disabled subscription keeps its events and sends them, signed, once enabled again', async () => {
      receiver.received.length = 0;
      const created = await subscribe({ url: receiver.url });
      const secret = created.secret ?? '';
      const disabled = await patch(created.id, { enabled: false, disabledReason: 'receiver migration' });
      assert.equal(disabled.statusCode, 200, disabled.body);
      const shown = disabled.json() as Shown;
      assert.equal(shown.enabled, false);
      assert.equal(shown.disabledReason, 'receiver migration');
      assert.ok(Math.abs(Date.parse(shown.disabledAt ?? '') - Date.now()) < 60_000);
      // Disabling again keeps the first time and reason.
      const again = (await patch(created.id, { enabled: false })).json() as Shown;
      assert.equal(again.disabledAt, shown.disabledAt);
      assert.equal(again.disabledReason, 'receiver migration');

      const plantIds = [9223372036854775000n, 42n, 43n];
      for (const id of plantIds)
        assert.equal((await postPlant(h, `{"id": ${id}, "name": "Waiting ${id}"}`)).statusCode, 200);
      // Several poll intervals: nothing may be sent while disabled.
      await sleep(400);
      assert.equal(receiver.received.length, 0, 'nothing is sent to a disabled subscription');
      const waiting = await deliveries(created.id);
      assert.equal(waiting.length, plantIds.length);
      assert.ok(waiting.every((d) => d.status === 'pending'));

      const enabled = await patch(created.id, { enabled: true });
      assert.equal(enabled.statusCode, 200, enabled.body);
      const enabledBody = enabled.json() as Shown;
      assert.equal(enabledBody.enabled, true);
      assert.equal(enabledBody.disabledAt, undefined);
      assert.equal(enabledBody.disabledReason, undefined);

      const received = await receiver.waitFor((list) => list.length >= plantIds.length);
      const bodies = received.map((request) => verifySignature(secret, request)).sort();
      assert.deepEqual(bodies, plantIds.map((id) => `{"id":${id},"name":"Waiting ${id}"}`).sort());
      assert.deepEqual(
        received.map((r) => String(r.headers['webhook-id'])).sort(),
        waiting.map((d) => d.eventId).sort(),
        'the events written while disabled, not new ones',
      );
      for (;;) {
        const log = await deliveries(created.id);
        if (log.every((d) => d.status === 'succeeded')) break;
        await sleep(50);
      }
    });

    it('a new URL takes the deliveries still pending; other subscriptions are not held by a disabled one', async () => {
      const old = await startReceiver();
      const other = await startReceiver();
      try {
        const moving = await subscribe({ url: old.url });
        const steady = await subscribe({ url: other.url });
        assert.equal((await patch(moving.id, { enabled: false })).statusCode, 200);
        assert.equal((await postPlant(h, '{"id": 777, "name": "Moved"}')).statusCode, 200);
        await other.waitFor((list) => list.some((r) => r.body === '{"id":777,"name":"Moved"}'));
        assert.equal(old.received.length, 0);

        const moved = await patch(moving.id, { url: other.url, enabled: true });
        assert.equal(moved.statusCode, 200, moved.body);
        const arrived = await other.waitFor(
          (list) => list.filter((r) => r.body === '{"id":777,"name":"Moved"}').length === 2,
        );
        assert.equal(old.received.length, 0, 'nothing went to the old URL');
        const forMoved = arrived.filter((r) => {
          try {
            verifySignature(moving.secret ?? '', r);
            return true;
          } catch {
            return false;
          }
        });
        assert.equal(forMoved.length, 1, "signed with the moved subscription's own secret");
        assert.ok(steady.id);
      } finally {
        await other.close();
        await old.close();
      }
    });
  });
