/**
 * /docs in a real browser: headless Chromium (Debian's /usr/bin/chromium, driven
 * by playwright-core; no browser is ever downloaded) loads the reference from a
 * listening server, a reader pastes a token and sends POST /plants from the page,
 * and sees the 200; without the token, the 401. Nothing is fetched from another
 * origin and the page's Content-Security-Policy is never violated. A screenshot
 * goes to test-output/.
 *
 * Without /usr/bin/chromium the test is skipped with one loud line, unless
 * PLANTSTORE_REQUIRE_BROWSER=1 (CI), where a missing browser fails the run.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Page, Response } from 'playwright-core';
import { listen } from '../client/servers.js';
import { unversioned } from '../support/assertions.js';
import { browserMissing, browserRequired, CHROMIUM, launchBrowser, type Browser } from '../support/browser.js';
import { createHarness, type Harness } from '../support/harness.js';

const OUTPUT = fileURLToPath(new URL('../../test-output/', import.meta.url));

if (browserMissing && browserRequired) {
  it('has Chromium to run the /docs browser test in (PLANTSTORE_REQUIRE_BROWSER=1)', () => {
    assert.fail(`${CHROMIUM} is missing: apt-get install -y chromium`);
  });
} else if (browserMissing) {
  process.stderr.write(
    `\n*** SKIPPING the /docs browser test: ${CHROMIUM} is missing (apt-get install -y chromium) ***\n\n`,
  );
}

describe('/docs in headless Chromium', { skip: browserMissing ? `${CHROMIUM} is missing` : false }, () => {
  let h: Harness;
  let origin: string;
  let browser: Browser;
  let page: Page;

  before(async () => {
    h = await createHarness();
    origin = await listen(h);
    browser = await launchBrowser(origin, { viewport: { width: 1400, height: 1000 } });
    page = browser.context.pages()[0] ?? (await browser.newPage());
  });

  after(async () => {
    await browser?.close();
    await h?.close();
  });

  const isCreate = (response: Response) =>
    response.url() === `${origin}/plants` && response.request().method() === 'POST';

  async function send(): Promise<Response> {
    const [response] = await Promise.all([
      page.waitForResponse(isCreate),
      // With the document's servers, the label names the full URL.
      page.getByRole('button', { name: /Send post request to (http:\/\/[^/]+)?\/plants$/ }).click(),
    ]);
    return response;
  }

  it('renders the reference from /openapi.json: operations, the error catalogue, limits', async () => {
    const [spec] = await Promise.all([page.waitForResponse(`${origin}/openapi.json`), page.goto(`${origin}/docs`)]);
    assert.equal(spec.status(), 200);
    await page.getByRole('heading', { name: 'Plant Store', exact: true }).waitFor();
    for (const text of ['Create a plant', 'List and find plants', 'Read a plant', 'Delete a plant']) {
      await page.getByText(text, { exact: true }).first().waitFor();
    }
    // The catalogue table from info.description, and a limit.
    await page.getByRole('cell', { name: 'PLANT_CONFLICT', exact: true }).waitFor();
    await page.getByRole('cell', { name: '40901', exact: true }).waitFor();
    await page
      .getByText(/at most \d+ bytes of UTF-8 JSON/)
      .first()
      .waitFor();
  });

  it('authorises with a pasted token and sends POST /plants: 200', async () => {
    await page.getByPlaceholder('Token').first().fill(h.tokens.write);
    await page.getByText('Create a plant', { exact: true }).first().click();
    await page.getByRole('button', { name: /Test Request.*post \/plants/ }).click();

    const response = await send();
    assert.equal(response.status(), 200);
    assert.equal(response.request().headers().authorization, `Bearer ${h.tokens.write}`);
    assert.deepEqual(await response.json(), { name: 'Monstera deliciosa', tag: 'houseplant' });
    await page.getByText('200 OK').first().waitFor();
    await page.getByText('"Monstera deliciosa"').last().waitFor();

    mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: join(OUTPUT, 'docs-create-200.png'), animations: 'disabled' });

    // The plant really is in the store.
    const stored = await h.store.plants.getPlant(10n);
    assert.deepEqual(unversioned(stored), { id: 10n, name: 'Monstera deliciosa', tag: 'houseplant' });
  });

  it('without the token the same request gets 401', async () => {
    // The request editor is a dialog over the page; its own auth field is the one that counts.
    await page.getByRole('dialog').getByRole('button', { name: 'Clear Value' }).click();
    const response = await send();
    assert.equal(response.status(), 401);
    // Scalar sends an empty "Bearer" (or nothing): no credentials either way.
    assert.match(response.request().headers().authorization ?? 'Bearer', /^Bearer\s*$/);
    assert.match(response.headers()['www-authenticate'] ?? '', /^Bearer realm=/);
    assert.ok([40101, 40102].includes(((await response.json()) as { error: number }).error));
    await page.getByText('401 Unauthorized').first().waitFor();
    await page.screenshot({ path: join(OUTPUT, 'docs-create-401.png'), animations: 'disabled' });
  });

  it('fetched nothing from another origin and broke no Content-Security-Policy rule', () => {
    assert.deepEqual(browser.foreignRequests, []);
    assert.deepEqual(browser.policyViolations, []);
    assert.deepEqual(browser.pageErrors, []);
  });
});
