/**
 * The operations added after the response check, answered the ways the generated requests do not reach: each
 * answer goes through the harness's check, so one off the document fails here.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, json, type Harness } from '../support/harness.js';

const WEBHOOK = 'whk_fedcba9876543210fedcba98';

for (const backend of testBackends()) {
  describe(`operations added later, as documented (${backend.name})`, () => {
    let h: Harness;
    before(async () => {
      h = await createHarness({ backend });
      await h.store.webhooks.insertSubscription({
        id: WEBHOOK,
        url: 'http://127.0.0.1:9/hook',
        secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        eventTypes: ['plant.created'],
        createdAt: new Date(),
      });
    });
    after(() => h.close());
    const admin = () => bearer(h.tokens.all);

    it('GET / in each media type it offers', async () => {
      for (const accept of ['application/json', 'text/html', '*/*']) {
        const response = await h.request({ method: 'GET', url: '/', headers: { accept } });
        assert.equal(response.statusCode, 200, accept);
      }
    });

    it('a subscription changed, refused as not a merge patch, recovered and tested', async () => {
      const read = await h.request({ method: 'GET', url: `/webhooks/${WEBHOOK}`, headers: admin() });
      const etag = read.headers.etag as string;
      const patch = { method: 'PATCH', url: `/webhooks/${WEBHOOK}` } as const;
      const changed = await h.request({
        ...patch,
        headers: { ...admin(), ...json, 'if-match': etag },
        payload: '{"eventTypes":["plant.deleted"]}',
      });
      assert.equal(changed.statusCode, 200, `${changed.statusCode} ${changed.body}`);
      const stale = await h.request({ ...patch, headers: { ...admin(), ...json, 'if-match': etag }, payload: '{}' });
      assert.equal(stale.statusCode, 412, stale.body);
      const wrongType = { ...admin(), 'content-type': 'text/plain' };
      assert.equal((await h.request({ ...patch, headers: wrongType, payload: 'x' })).statusCode, 415);
      const recovered = await h.request({
        method: 'POST',
        url: `/webhooks/${WEBHOOK}/recover`,
        headers: { ...admin(), ...json },
        payload: JSON.stringify({ since: new Date(Date.now() - 3_600_000).toISOString() }),
      });
      assert.equal(recovered.statusCode, 202, recovered.body);
      const progress = await h.request({ method: 'GET', url: String(recovered.headers.location), headers: admin() });
      assert.equal(progress.statusCode, 200, progress.body);
      const tested = await h.request({ method: 'POST', url: `/webhooks/${WEBHOOK}/test`, headers: admin() });
      assert.equal(tested.statusCode, 200, tested.body);
    });

    it('an event ticket, a token created, read as current and revoked', async () => {
      const ticket = await h.request({ method: 'POST', url: '/events/tickets', headers: bearer(h.tokens.read) });
      assert.equal(ticket.statusCode, 200, ticket.body);
      const created = await h.request({
        method: 'POST',
        url: '/tokens',
        headers: { ...admin(), ...json },
        payload: '{"name":"later-ops","scopes":["plants:read"]}',
      });
      assert.equal(created.statusCode, 201, created.body);
      const secret = (created.json() as { secret: string }).secret;
      const current = await h.request({ method: 'GET', url: '/tokens/current', headers: bearer(secret) });
      assert.equal(current.statusCode, 200, current.body);
      const taken = await h.request({
        method: 'POST',
        url: '/tokens',
        headers: { ...admin(), ...json },
        payload: '{"name":"later-ops","scopes":["plants:read"]}',
      });
      assert.equal(taken.statusCode, 409, taken.body);
      assert.equal((await h.request({ method: 'DELETE', url: '/tokens/later-ops', headers: admin() })).statusCode, 200);
      assert.equal(
        (await h.request({ method: 'GET', url: '/tokens/current', headers: bearer(secret) })).statusCode,
        401,
      );
    });
  });
}
