/**
 * The front door (`GET /`) as a newcomer's browser sees it, in real Chromium: the page renders under its own
 * Content-Security-Policy (no script, its stylesheet allowed by hash), links every place it names at the service's
 * own origin, leads to the console, and has no serious accessibility violation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { buildConsole } from '../../scripts/build-console.js';
import { listen } from '../client/servers.js';
import {
  browserMissing,
  browserRequired,
  CHROMIUM,
  launchBrowser,
  seriousViolations,
  type Browser,
} from '../support/browser.js';
import { createHarness, type Harness } from '../support/harness.js';

if (browserMissing && browserRequired) {
  it('has Chromium to run the front-door test in (PLANTSTORE_REQUIRE_BROWSER=1)', () =>
    assert.fail(`${CHROMIUM} is missing`));
}

describe('the front door in headless Chromium', { skip: browserMissing ? `${CHROMIUM} is missing` : false }, () => {
  let h: Harness;
  let origin: string;
  let browser: Browser;
  let page: Page;

  before(async () => {
    await buildConsole();
    h = await createHarness();
    origin = await listen(h);
    browser = await launchBrowser(origin);
    page = await browser.newPage();
  });
  after(async () => {
    await browser?.close();
    await h?.close();
  });

  it('shows what the service is and links the reference, console, document and health checks', async () => {
    const response = await page.goto(`${origin}/`);
    assert.equal(response?.status(), 200);
    assert.match(response?.headers()['content-type'] ?? '', /^text\/html/);
    assert.equal(await page.title(), 'Plant Store');
    await page.getByRole('heading', { name: 'Plant Store' }).waitFor();
    for (const path of ['/docs', '/console', '/openapi.json', '/healthz', '/readyz']) {
      const href = await page.getByRole('link', { name: path, exact: true }).getAttribute('href');
      assert.equal(href, `${origin}${path}`);
    }
    // The stylesheet applied: the policy allowed it by its hash (a refused one leaves the heading black).
    const colour = await page.evaluate("getComputedStyle(document.querySelector('h1')).color");
    assert.equal(colour, 'rgb(46, 125, 50)');
    assert.deepEqual(await seriousViolations(page), []);
  });

  it('leads to the console', async () => {
    await page.getByRole('link', { name: '/console', exact: true }).click();
    await page.getByLabel('API token').waitFor();
    assert.equal(new URL(page.url()).pathname, '/console');
  });

  it('broke no Content-Security-Policy rule, threw no script error, requested nothing from another host', () => {
    assert.deepEqual(browser.policyViolations, []);
    assert.deepEqual(browser.pageErrors, []);
    assert.deepEqual(browser.foreignRequests, []);
  });
});
