/**
 * /docs without a browser: the page and its script come from this service, and
 * the Content-Security-Policy allows exactly the page's inline script.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { assertError } from '../support/assertions.js';
import { createHarness, type Harness } from '../support/harness.js';

describe('GET /docs', () => {
  let h: Harness;
  before(async () => {
    h = await createHarness();
  });
  after(() => h.close());

  it('redirects /docs to /docs/', async () => {
    const response = await h.request({ method: 'GET', url: '/docs' });
    assert.equal(response.statusCode, 301);
    assert.equal(response.headers.location, '/docs/');
  });

  it('serves a page that loads only local assets and reads our /openapi.json', async () => {
    const response = await h.request({ method: 'GET', url: '/docs/' });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/html/);
    const scripts = [...response.body.matchAll(/<script[^>]*\bsrc="([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(scripts, ['js/scalar.js']);
    assert.doesNotMatch(response.body, /https?:\/\//, 'no absolute URL, so nothing from a CDN');
    assert.match(response.body, /"url": "\/openapi\.json"/);
    assert.match(response.body, /"withDefaultFonts": false/);
  });

  it("serves Scalar's bundle from the installed package", async () => {
    const response = await h.request({ method: 'GET', url: '/docs/js/scalar.js' });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /javascript/);
    assert.ok(response.body.length > 1_000_000);
    assert.match(response.body, /createApiReference/);
  });

  it('sends a Content-Security-Policy that allows this origin only, and the inline script by its hash', async () => {
    const response = await h.request({ method: 'GET', url: '/docs/' });
    const policy = String(response.headers['content-security-policy']);
    const inline = /<script type="text\/javascript">([\s\S]*?)<\/script>/.exec(response.body)?.[1] ?? '';
    const hash = createHash('sha256').update(inline).digest('base64');
    assert.match(policy, /default-src 'none'/);
    assert.ok(policy.includes(`script-src 'self' 'sha256-${hash}'`), policy);
    assert.match(policy, /connect-src 'self'(;|$)/);
    assert.doesNotMatch(policy, /unsafe-eval|https?:/);
    assert.equal(response.headers['x-content-type-options'], 'nosniff');
  });

  it('answers a path under /docs that does not exist with a 404 Error record, as everywhere else', async () => {
    for (const url of ['/docs/x', '/docs/js/', '/docs/js/other.js', '/docs//']) {
      const response = await h.request({ method: 'GET', url });
      assertError(response, Errors.ROUTE_NOT_FOUND, `no operation at GET ${url}`);
    }
  });

  it('is not part of the API description', async () => {
    const doc = (await h.request({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, unknown> };
    assert.ok(!Object.keys(doc.paths).some((path) => path.startsWith('/docs')));
  });
});
