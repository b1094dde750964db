/**
 * RFC 9110's conditional requests on every write of a plant (If-None-Match beside If-Match), empty 304 and 204
 * answers, and Accept-Patch (RFC 5789), on both stores.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { assertError } from '../support/assertions.js';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, json, postPlant, type Harness } from '../support/harness.js';

for (const backend of testBackends()) {
  describe(`conditional writes and empty answers (${backend.name})`, () => {
    let h: Harness;
    before(async () => {
      h = await createHarness({ backend });
    });
    after(() => h.close());

    const write = (token: string) => ({ ...json, ...bearer(token) });

    async function created(id: number): Promise<string> {
      const response = await postPlant(h, JSON.stringify({ id, name: 'Fern', tag: 'outdoor' }));
      assert.equal(response.statusCode, 200);
      return String(response.headers.etag);
    }

    it('a 304 has no body and no Content-Length of its own', async () => {
      const etag = await created(1);
      const response = await h.request({
        method: 'GET',
        url: '/plants/1',
        headers: { ...bearer(h.tokens.read), 'if-none-match': etag },
      });
      assert.equal(response.statusCode, 304);
      assert.equal(response.body, '');
      assert.equal(response.headers['content-length'], undefined);
      assert.equal(response.headers.etag, etag);
    });

    it('a 204 has no body and no Content-Length', async () => {
      await created(2);
      const response = await h.request({ method: 'DELETE', url: '/plants/2', headers: bearer(h.tokens.write) });
      assert.equal(response.statusCode, 204);
      assert.equal(response.body, '');
      assert.equal(response.headers['content-length'], undefined);
    });

    it('If-None-Match: * refuses PUT, PATCH and DELETE of an existing plant with 412, and nothing changes', async () => {
      const etag = await created(3);
      const headers = { ...write(h.tokens.write), 'if-none-match': '*' };
      for (const [method, payload] of [
        ['PUT', '{"name":"Other"}'],
        ['PATCH', '{"name":"Other"}'],
        ['DELETE', undefined],
      ] as const) {
        const response = await h.request({ method, url: '/plants/3', headers, payload });
        assertError(response, Errors.PRECONDITION_FAILED, 'If-None-Match');
      }
      const read = await h.request({ method: 'GET', url: '/plants/3', headers: bearer(h.tokens.read) });
      assert.deepEqual(read.json(), { id: 3, name: 'Fern', tag: 'outdoor' });
      assert.equal(read.headers.etag, etag);
    });

    it('If-None-Match: * on an absent plant leaves the 404', async () => {
      const headers = { ...write(h.tokens.write), 'if-none-match': '*' };
      const response = await h.request({ method: 'PUT', url: '/plants/404', headers, payload: '{"name":"X"}' });
      assertError(response, Errors.PLANT_NOT_FOUND);
    });

    it('If-None-Match with a list of ETags refuses a write while the plant is at one of them, weakly compared', async () => {
      const etag = await created(4);
      const refused = await h.request({
        method: 'PATCH',
        url: '/plants/4',
        headers: { ...write(h.tokens.write), 'if-none-match': `"999999", W/${etag}` },
        payload: '{"name":"Other"}',
      });
      assertError(refused, Errors.PRECONDITION_FAILED);
      const allowed = await h.request({
        method: 'PATCH',
        url: '/plants/4',
        headers: { ...write(h.tokens.write), 'if-none-match': '"999999"' },
        payload: '{"name":"Other"}',
      });
      assert.equal(allowed.statusCode, 200);
      assert.equal(allowed.json().name, 'Other');
      assert.notEqual(allowed.headers.etag, etag);
      const deleted = await h.request({
        method: 'DELETE',
        url: '/plants/4',
        headers: { ...bearer(h.tokens.write), 'if-none-match': etag },
      });
      assert.equal(deleted.statusCode, 204);
    });

    it('If-Match is checked first: a failing If-Match is a 412 whatever If-None-Match says', async () => {
      await created(5);
      const response = await h.request({
        method: 'PUT',
        url: '/plants/5',
        headers: { ...write(h.tokens.write), 'if-match': '"999999"', 'if-none-match': '"888888"' },
        payload: '{"name":"Other"}',
      });
      assertError(response, Errors.PRECONDITION_FAILED, 'If-Match');
    });

    it('a PATCH answered 415 says which patch formats it takes (Accept-Patch)', async () => {
      await created(6);
      const response = await h.request({
        method: 'PATCH',
        url: '/plants/6',
        headers: { ...bearer(h.tokens.write), 'content-type': 'text/plain' },
        payload: 'name=x',
      });
      assertError(response, Errors.UNSUPPORTED_MEDIA_TYPE);
      assert.equal(response.headers['accept-patch'], 'application/merge-patch+json, application/json');
    });

    it('an OPTIONS request for a plant names the patch formats beside the methods', async () => {
      const response = await h.request({ method: 'OPTIONS', url: '/plants/6' });
      assert.match(String(response.headers.allow), /PATCH/);
      assert.equal(response.headers['accept-patch'], 'application/merge-patch+json, application/json');
      const collection = await h.request({ method: 'OPTIONS', url: '/plants' });
      assert.equal(collection.headers['accept-patch'], undefined);
    });
  });
}
