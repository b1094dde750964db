/**
 * What each console browser test needs: the console built, a harness listening on a real socket, headless Chromium,
 * signing in as an operator does, and HTTP calls beside the browser (to seed data and to check what the console did).
 */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { Page } from 'playwright-core';
import { buildConsole } from '../../scripts/build-console.js';
import { listen } from '../client/servers.js';
import type { TestBackend } from '../support/backends.js';
import { launchBrowser, type Browser } from '../support/browser.js';
import { bearer, createHarness, json, type Harness } from '../support/harness.js';

export interface ConsoleRig {
  readonly h: Harness;
  readonly origin: string;
  readonly browser: Browser;
  /** A new tab of `width` x 800 (1280 when left out), signed in with `token`. */
  signedIn(token: string, width?: number): Promise<Page>;
  /** An API call with `token` (the harness's all-scopes token when left out), its status checked. */
  call(method: 'GET' | 'POST' | 'DELETE', url: string, body?: string, token?: string): Promise<LightMyRequestResponse>;
  /** A new token's secret. */
  issueToken(name: string, scopes?: readonly string[]): Promise<string>;
  close(): Promise<void>;
}

export async function signIn(page: Page, origin: string, token: string): Promise<void> {
  await page.goto(`${origin}/console`);
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

export async function startConsoleRig(backend: TestBackend, env: Record<string, string> = {}): Promise<ConsoleRig> {
  await buildConsole();
  const h = await createHarness({ backend, env });
  const origin = await listen(h);
  const browser = await launchBrowser(origin);
  const call: ConsoleRig['call'] = async (method, url, body, token = h.tokens.all) => {
    const response = await h.request({
      method,
      url,
      headers: { ...bearer(token), ...(body === undefined ? {} : json) },
      ...(body === undefined ? {} : { payload: body }),
    });
    assert.ok(response.statusCode < 300, `${method} ${url}: ${response.statusCode} ${response.body}`);
    return response;
  };
  return {
    h,
    origin,
    browser,
    async signedIn(token, width = 1280) {
      const page = await browser.newPage();
      await page.setViewportSize({ width, height: 800 });
      await signIn(page, origin, token);
      return page;
    },
    call,
    async issueToken(name, scopes = ['plants:read', 'plants:write', 'admin']) {
      const created = await call('POST', '/tokens', JSON.stringify({ name, scopes }), h.tokens.all);
      return (JSON.parse(created.body) as { secret: string }).secret;
    },
    async close() {
      await browser.close();
      await h.close();
    },
  };
}
