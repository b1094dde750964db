/**
 * The API from a page of another origin, in real Chromium (Debian's /usr/bin/chromium through playwright-core):
 * two local servers on different ports, the page's origin in CORS_ORIGINS. The page reads the change stream
 * with fetch, resuming with Last-Event-ID, and with a real EventSource opened by a ticket (no token in a URL);
 * a spent ticket is refused. Skipped with one loud line without Chromium, unless PLANTSTORE_REQUIRE_BROWSER=1.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { listen } from '../client/servers.js';
import { browserMissing, browserRequired, CHROMIUM, launchBrowser, type Browser } from '../support/browser.js';
import { bearer, createHarness, json, type Harness } from '../support/harness.js';

if (browserMissing && browserRequired) {
  it('has Chromium to run the cross-origin browser test in (PLANTSTORE_REQUIRE_BROWSER=1)', () => {
    assert.fail(`${CHROMIUM} is missing: apt-get install -y chromium`);
  });
} else if (browserMissing) {
  process.stderr.write(`\n*** SKIPPING the cross-origin browser test: ${CHROMIUM} is missing ***\n\n`);
}

/** The page's script: what a browser client of the API does, exposed for the test to call. */
const APP_JS = `
window.app = {
  async resume(api, token, lastEventId) {
    const response = await fetch(api + '/events', { headers: { Authorization: 'Bearer ' + token, 'Last-Event-ID': lastEventId } });
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes('streaming changes after')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    await reader.cancel();
    return { status: response.status, text };
  },
  async ticket(api, token) {
    const response = await fetch(api + '/events/tickets', { method: 'POST', headers: { Authorization: 'Bearer ' + token } });
    return (await response.json()).ticket;
  },
  watch(api, ticket) {
    const state = { opened: false, received: [], failed: false, readyState: -1 };
    const source = new EventSource(api + '/events?ticket=' + encodeURIComponent(ticket));
    source.addEventListener('open', () => (state.opened = true));
    source.addEventListener('plant.created', (event) => state.received.push({ id: event.lastEventId, data: event.data }));
    source.addEventListener('error', () => {
      state.failed = true;
      state.readyState = source.readyState;
      if (state.opened) source.close();
    });
    window.watches = [...(window.watches || []), state];
    return window.watches.length - 1;
  },
};
`;

describe(
  'a page of another origin, in headless Chromium',
  { skip: browserMissing ? `${CHROMIUM} is missing` : false },
  () => {
    let pages: Server;
    let pageOrigin: string;
    let h: Harness;
    let api: string;
    let browser: Browser;
    let page: Page;
    const consoleErrors: string[] = [];

    before(async () => {
      pages = createServer((request, response) => {
        if (request.url === '/app.js') response.writeHead(200, { 'content-type': 'text/javascript' }).end(APP_JS);
        else
          response
            .writeHead(200, { 'content-type': 'text/html' })
            .end('<!doctype html><title>another origin</title><script src="/app.js"></script>');
      });
      await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
      pageOrigin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
      h = await createHarness({ env: { CORS_ORIGINS: pageOrigin } });
      api = await listen(h);
      assert.notEqual(new URL(api).port, new URL(pageOrigin).port);
      // The page's origin is not the API's: requests to the API are the point here, not foreign.
      browser = await launchBrowser(pageOrigin);
      page = browser.context.pages()[0] ?? (await browser.newPage());
      page.on('console', (message) => {
        if (message.type() === 'error') consoleErrors.push(message.text());
      });
      await page.goto(`${pageOrigin}/`);
      await page.waitForFunction('window.app !== undefined');
    });

    after(async () => {
      await browser?.close();
      await h?.close();
      await new Promise((resolve) => pages?.close(resolve));
    });

    const call = <T>(expression: string, ...values: unknown[]): Promise<T> =>
      page.evaluate(`(${expression})(...${JSON.stringify(values)})`) as Promise<T>;

    it('reads the stream with fetch, sending Authorization and Last-Event-ID across origins', async () => {
      const created = await fetch(`${api}/plants`, {
        method: 'POST',
        headers: { ...json, ...bearer(h.tokens.write) },
        body: '{"id": 1, "name": "Aloe vera", "tag": "succulent"}',
      });
      assert.equal(created.status, 200);
      const bounds = await h.store.changes.bounds();
      const id = `${bounds.history}-${bounds.last}`;
      const { status, text } = await call<{ status: number; text: string }>(
        '(api, token, id) => window.app.resume(api, token, id)',
        api,
        h.tokens.read,
        id,
      );
      assert.equal(status, 200, text);
      assert.match(text, new RegExp(`id: ${id}\\n`), 'the stream resumed right after the Last-Event-ID sent');
      assert.match(text, new RegExp(`streaming changes after ${bounds.last}`));
    });

    it('opens a real EventSource with a ticket, receives changes, and a spent ticket is refused', async () => {
      const ticket = await call<string>('(api, token) => window.app.ticket(api, token)', api, h.tokens.read);
      assert.match(ticket, /^pet_/);
      const index = await call<number>('(api, ticket) => window.app.watch(api, ticket)', api, ticket);
      await page.waitForFunction(`window.watches[${index}].opened`, undefined, { timeout: 10_000 });
      const created = await fetch(`${api}/plants`, {
        method: 'POST',
        headers: { ...json, ...bearer(h.tokens.write) },
        body: '{"id": 2, "name": "Dionaea muscipula", "tag": "carnivorous"}',
      });
      assert.equal(created.status, 200);
      await page.waitForFunction(`window.watches[${index}].received.length > 0`, undefined, { timeout: 10_000 });
      const received = await call<{ id: string; data: string }[]>(`() => window.watches[${index}].received`);
      assert.equal(received[0]?.data, '{"id":2,"name":"Dionaea muscipula","tag":"carnivorous"}');

      // The same ticket again: the server refuses it (401), and EventSource gives up (CLOSED).
      const spent = await call<number>('(api, ticket) => window.app.watch(api, ticket)', api, ticket);
      await page.waitForFunction(`window.watches[${spent}].failed`, undefined, { timeout: 10_000 });
      const state = await call<{ opened: boolean; readyState: number }>(`() => window.watches[${spent}]`);
      assert.equal(state.opened, false);
      assert.equal(state.readyState, 2, 'EventSource.CLOSED');
      assert.ok(
        consoleErrors.every((text) => !/CORS|Access-Control/i.test(text)),
        `no CORS refusals: ${consoleErrors.join('\n')}`,
      );
    });
  },
);
