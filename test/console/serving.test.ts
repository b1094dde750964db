/**
 * GET /console as shipped: the page and its hashed assets, precompressed, immutable, under a strict CSP; and a smoke
 * test in headless Chromium (sign in, see the plants). The full browser suite is console.browser.test.ts (test:slow).
 */
import assert from 'node:assert/strict';
import { gunzipSync, brotliDecompressSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { buildConsole } from '../../scripts/build-console.js';
import { Errors } from '../../src/http/errors.js';
import { assertError } from '../support/assertions.js';
import { createHarness, type Harness } from '../support/harness.js';
import { listen } from '../client/servers.js';
import { browserMissing, browserRequired, CHROMIUM, launchBrowser, type Browser } from '../support/browser.js';

describe('GET /console', () => {
  let h: Harness;
  let assets: string[];
  before(async () => {
    const manifest = await buildConsole();
    assets = Object.keys(manifest.files).filter((name) => name.startsWith('assets/'));
    h = await createHarness();
  });
  after(() => h.close());

  it('serves the page with a strict Content-Security-Policy: no inline script, this origin only', async () => {
    for (const url of ['/console', '/console/']) {
      const page = await h.request({ method: 'GET', url });
      assert.equal(page.statusCode, 200);
      assert.match(String(page.headers['content-type']), /^text\/html/);
      const policy = String(page.headers['content-security-policy']);
      assert.match(policy, /script-src 'self'(;|$)/);
      assert.match(policy, /connect-src 'self'/);
      assert.doesNotMatch(policy, /unsafe-inline|unsafe-eval|https?:/);
      assert.equal(page.headers['cache-control'], 'no-cache');
      assert.doesNotMatch(page.body, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
      assert.doesNotMatch(page.body, /https?:\/\//, 'nothing from another host');
    }
  });

  it('serves hashed assets immutable, compressed as the client accepts, and revalidates the page by ETag', async () => {
    assert.equal(assets.length, 2);
    for (const name of assets) {
      const url = `/console/${name}`;
      const plain = await h.request({ method: 'GET', url, headers: { 'accept-encoding': 'identity' } });
      assert.equal(plain.statusCode, 200);
      assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.equal(plain.headers['content-encoding'], undefined);
      const br = await h.request({ method: 'GET', url, headers: { 'accept-encoding': 'gzip, br' } });
      assert.equal(br.headers['content-encoding'], 'br');
      assert.equal(brotliDecompressSync(br.rawPayload).toString(), plain.body);
      const gzip = await h.request({ method: 'GET', url, headers: { 'accept-encoding': 'gzip, br;q=0' } });
      assert.equal(gzip.headers['content-encoding'], 'gzip');
      assert.equal(gunzipSync(gzip.rawPayload).toString(), plain.body);
      assert.equal(br.headers.vary, 'accept-encoding');
    }
    const page = await h.request({ method: 'GET', url: '/console' });
    const again = await h.request({
      method: 'GET',
      url: '/console',
      headers: { 'if-none-match': String(page.headers.etag) },
    });
    assert.equal(again.statusCode, 304);
  });

  it('answers an unknown asset with a 404 Error record', async () => {
    assertError(await h.request({ method: 'GET', url: '/console/assets/app-NOPE.js' }), Errors.ROUTE_NOT_FOUND);
  });
});

if (browserMissing && browserRequired) {
  it('has Chromium to run the console smoke test in (PLANTSTORE_REQUIRE_BROWSER=1)', () => {
    assert.fail(`${CHROMIUM} is missing`);
  });
}

describe('console smoke test in headless Chromium', { skip: browserMissing ? `${CHROMIUM} is missing` : false }, () => {
  let h: Harness;
  let origin: string;
  let browser: Browser;
  before(async () => {
    await buildConsole();
    h = await createHarness();
    origin = await listen(h);
    browser = await launchBrowser(origin);
  });
  after(async () => {
    await browser?.close();
    await h?.close();
  });

  it('signs in with a pasted token and shows the plants, keeping the token out of the URL and localStorage', async () => {
    await h.request({
      method: 'POST',
      url: '/plants',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${h.tokens.all}` },
      payload: '{"id":9223372036854775807,"name":"Monstera deliciosa","tag":"houseplant"}',
    });
    const page = await browser.newPage();
    await page.goto(`${origin}/console`);
    await page.getByLabel('API token').fill(h.tokens.all);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('cell', { name: '9223372036854775807', exact: true }).waitFor();
    await page.getByText('Showing 1–1 of 1').waitFor();
    assert.ok(!page.url().includes('pst_'));
    assert.equal(await page.evaluate(() => JSON.stringify(localStorage)), '{}');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API token').waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.length), 0);
    assert.deepEqual(browser.foreignRequests, []);
    assert.deepEqual(browser.policyViolations, []);
    assert.deepEqual(browser.pageErrors, []);
  });
});
