/**
 * GET / for browsers and API clients, the OpenAPI document's servers (PUBLIC_URL or the request's origin),
 * and response compression: large bodies compressed for clients that accept it, small ones never.
 */
import assert from 'node:assert/strict';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { SERVICE_VERSION } from '../../src/system/version.js';
import { bearer, createHarness, json, type Harness } from '../support/harness.js';

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describe('the front door and the base URL', () => {
  let h: Harness;
  before(async () => {
    h = await createHarness();
  });
  after(() => h.close());

  it('answers a browser with a script-free page linking docs, console, health, readiness and the OpenAPI document', async () => {
    const response = await h.request({
      method: 'GET',
      url: '/',
      headers: { accept: BROWSER_ACCEPT, host: 'plants.test:8080' },
    });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/html; charset=utf-8/);
    for (const path of ['/docs', '/console', '/healthz', '/readyz', '/openapi.json'])
      assert.ok(response.body.includes(`href="http://plants.test:8080${path}"`), `${path} in ${response.body}`);
    assert.doesNotMatch(response.body, /<script/i);
    assert.ok(response.body.includes(SERVICE_VERSION));
    const policy = String(response.headers['content-security-policy']);
    assert.match(policy, /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; /);
    assert.doesNotMatch(policy, /unsafe|script-src/);
    assert.match(String(response.headers.vary), /Accept/);
  });

  it('answers an API client (curl sends */*) with the links as JSON', async () => {
    for (const accept of ['*/*', 'application/json', undefined]) {
      const response = await h.request({
        method: 'GET',
        url: '/',
        headers: { host: 'plants.test', ...(accept === undefined ? {} : { accept }) },
      });
      assert.equal(response.statusCode, 200, String(accept));
      assert.match(String(response.headers['content-type']), /^application\/json/);
      const body = response.json<{ name: string; version: string; links: Record<string, { href: string }> }>();
      assert.equal(body.version, SERVICE_VERSION);
      assert.equal(body.links.docs?.href, 'http://plants.test/docs');
      assert.equal(body.links.console?.href, 'http://plants.test/console');
      assert.equal(body.links.readiness?.href, 'http://plants.test/readyz');
    }
  });

  it("gives /openapi.json the request's origin as its server, and ignores a malformed Host", async () => {
    const document = (
      await h.request({ method: 'GET', url: '/openapi.json', headers: { host: 'api.example:9000' } })
    ).json<{
      servers: { url: string }[];
      paths: object;
    }>();
    assert.deepEqual(document.servers, [{ url: 'http://api.example:9000' }]);
    assert.ok('/plants' in document.paths);
    const odd = await h.request({ method: 'GET', url: '/openapi.json', headers: { host: 'bad_host.example' } });
    assert.equal(odd.statusCode, 200);
    assert.deepEqual(odd.json<{ servers: unknown }>().servers, [{ url: '/' }]);
  });

  it('compresses large answers for a client that accepts gzip, and never a small one', async () => {
    const docs = await h.request({ method: 'GET', url: '/docs/js/scalar.js', headers: { 'accept-encoding': 'gzip' } });
    assert.equal(docs.statusCode, 200);
    assert.equal(docs.headers['content-encoding'], 'gzip');
    const unzipped = gunzipSync(docs.rawPayload);
    assert.ok(unzipped.length > 1_000_000 && docs.rawPayload.length < unzipped.length / 2, `${docs.rawPayload.length}`);
    const plain = await h.request({ method: 'GET', url: '/docs/js/scalar.js' });
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.deepEqual(plain.rawPayload, unzipped);
    // Compressed once and kept: the same bytes again; brotli for a client that prefers it.
    const again = await h.request({ method: 'GET', url: '/docs/js/scalar.js', headers: { 'accept-encoding': 'gzip' } });
    assert.deepEqual(again.rawPayload, docs.rawPayload);
    assert.equal(again.headers['content-length'], String(docs.rawPayload.length));
    const brotli = await h.request({
      method: 'GET',
      url: '/docs/js/scalar.js',
      headers: { 'accept-encoding': 'gzip, br' },
    });
    assert.equal(brotli.headers['content-encoding'], 'br');
    assert.deepEqual(brotliDecompressSync(brotli.rawPayload), unzipped);
    assert.match(String(brotli.headers.vary), /Accept-Encoding/i);
    const refused = await h.request({
      method: 'GET',
      url: '/docs/js/scalar.js',
      headers: { 'accept-encoding': 'br;q=0, gzip' },
    });
    assert.equal(refused.headers['content-encoding'], 'gzip');

    const openapi = await h.request({
      method: 'GET',
      url: '/openapi.json',
      headers: { 'accept-encoding': 'gzip, br' },
    });
    assert.match(String(openapi.headers['content-encoding']), /^(br|gzip)$/);

    const created = await h.request({
      method: 'POST',
      url: '/plants',
      headers: { ...json, ...bearer(h.tokens.write), 'accept-encoding': 'gzip, br' },
      payload: { id: 1, name: 'Monstera deliciosa', tag: 'houseplant' },
    });
    assert.equal(created.statusCode, 200);
    assert.equal(created.headers['content-encoding'], undefined, 'a small body goes as it is');
    assert.equal(created.body, '{"name":"Monstera deliciosa","tag":"houseplant"}');
  });

  it('refuses a compressed request body as before (415), rather than inflating it', async () => {
    const response = await h.request({
      method: 'POST',
      url: '/plants',
      headers: { ...json, ...bearer(h.tokens.write), 'content-encoding': 'gzip' },
      payload: '{"id":2,"name":"x"}',
    });
    assert.equal(response.statusCode, 415);
  });
});

describe('PUBLIC_URL', () => {
  let h: Harness;
  before(async () => {
    h = await createHarness({ env: { PUBLIC_URL: 'https://plants.example.com/store/' } });
  });
  after(() => h.close());

  it('is the server of the OpenAPI document and the base of the front door links, whatever the Host', async () => {
    const document = (
      await h.request({ method: 'GET', url: '/openapi.json', headers: { host: 'internal:8080' } })
    ).json<{
      servers: { url: string }[];
    }>();
    assert.deepEqual(document.servers, [{ url: 'https://plants.example.com/store' }]);
    const home = (await h.request({ method: 'GET', url: '/', headers: { host: 'internal:8080' } })).json<{
      links: { docs: { href: string } };
    }>();
    assert.equal(home.links.docs.href, 'https://plants.example.com/store/docs');
  });
});
