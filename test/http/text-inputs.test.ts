/**
 * Text that reaches the store from a query, a path or a body: control characters
 * (NUL above all, which PostgreSQL text cannot hold) are refused with a 400 naming
 * the input, on every store alike, and never reach the database as a 500.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { assertError } from '../support/assertions.js';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, json, postPlant, type Harness } from '../support/harness.js';

/** C0 controls, DEL and C1 controls: Unicode's control characters (category Cc). */
const CONTROLS = ['\u0000', '\u0001', '\u001f', '\u007f', '\u0085', '\u009f'];

const hex = (c: string) => `U+${c.codePointAt(0)?.toString(16).padStart(4, '0')}`;

for (const backend of testBackends())
  describe(`control characters in text inputs [${backend.name}]`, () => {
    let h: Harness;
    let subscriptionId: string;

    before(async () => {
      h = await createHarness({ backend, env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } });
      const created = await h.request({
        method: 'POST',
        url: '/webhooks',
        headers: { ...json, ...bearer(h.tokens.admin) },
        payload: JSON.stringify({ url: 'http://127.0.0.1:9/hooks' }),
      });
      assert.equal(created.statusCode, 201, created.body);
      subscriptionId = (created.json() as { id: string }).id;
    });
    after(() => h.close());

    for (const c of CONTROLS) {
      it(`refuses ${hex(c)} in a plant's name and tag`, async () => {
        assertError(
          await postPlant(h, JSON.stringify({ id: 1, name: `a${c}b` })),
          Errors.INVALID_FIELD,
          'name must not contain control characters',
        );
        assertError(
          await postPlant(h, JSON.stringify({ id: 1, name: 'a', tag: `${c}` })),
          Errors.INVALID_FIELD,
          'tag must not contain control characters',
        );
      });

      it(`refuses ${hex(c)} in the list's tag filter`, async () => {
        const response = await h.request({
          method: 'GET',
          url: `/plants?tag=a${encodeURIComponent(c)}b`,
          headers: bearer(h.tokens.read),
        });
        assertError(response, Errors.INVALID_PARAMETER, 'tag must not contain control characters');
      });
    }

    it('still finds plants by a tag of ordinary text, accents and emoji included', async () => {
      const tag = 'Café 🌿 tropical';
      assert.equal((await postPlant(h, JSON.stringify({ id: 7, name: 'Monstera', tag }))).statusCode, 200);
      const response = await h.request({
        method: 'GET',
        url: `/plants?tag=${encodeURIComponent(tag)}`,
        headers: bearer(h.tokens.read),
      });
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual(response.json(), [{ id: 7, name: 'Monstera', tag }]);
    });

    for (const id of ['%00', 'a%00b', 'whk_%7F', 'a%20b', 'a.b', '%E2%82%AC']) {
      it(`refuses the subscription id '${decodeURIComponent(id)}' on every route that takes one`, async () => {
        const admin = bearer(h.tokens.admin);
        const requests = [
          { method: 'GET', url: `/webhooks/${id}` },
          { method: 'DELETE', url: `/webhooks/${id}` },
          { method: 'POST', url: `/webhooks/${id}/rotate-secret` },
          { method: 'GET', url: `/webhooks/${id}/deliveries` },
          { method: 'POST', url: `/webhooks/${subscriptionId}/deliveries/dlv_${id}/retry` },
        ] as const;
        for (const request of requests) {
          const response = await h.request({ ...request, headers: admin });
          assertError(
            response,
            Errors.INVALID_PARAMETER,
            /(id|deliveryId) must contain only letters, digits and underscores/,
          );
        }
      });
    }

    it('still answers 404 for a well-formed subscription id that does not exist', async () => {
      const response = await h.request({
        method: 'GET',
        url: '/webhooks/whk_000000000000000000000000',
        headers: bearer(h.tokens.admin),
      });
      assert.equal(response.statusCode, 404, response.body);
    });

    for (const url of [
      'http://127.0.0.1:9/a\u0000b',
      '\u0000http://127.0.0.1:9/a',
      'http://127.0.0.1:9/a\t',
      'http://127.0.0.1:9/a b',
      'http://127.0.0.1:9/\u0085',
    ]) {
      it(`refuses the webhook url ${JSON.stringify(url)} and stores nothing`, async () => {
        const before = await h.request({ method: 'GET', url: '/webhooks', headers: bearer(h.tokens.admin) });
        const response = await h.request({
          method: 'POST',
          url: '/webhooks',
          headers: { ...json, ...bearer(h.tokens.admin) },
          payload: JSON.stringify({ url }),
        });
        assertError(response, Errors.INVALID_WEBHOOK_URL, 'url must not contain spaces or control characters');
        const afterwards = await h.request({ method: 'GET', url: '/webhooks', headers: bearer(h.tokens.admin) });
        assert.equal(afterwards.body, before.body);
      });
    }
  });
