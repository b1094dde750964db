/**
 * With CORS on, @fastify/cors puts `Vary: Origin` on every answer before the route runs (the answer's
 * Access-Control-Allow-Origin depends on it). Every route that varies on a header of its own adds it to that list
 * rather than replacing it; otherwise a shared cache would hand one origin's answer to another.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildConsole } from '../../scripts/build-console.js';
import { bearer, createHarness, type Harness } from '../support/harness.js';

const ORIGIN = 'http://app.example:3000';

function varyFields(header: string | string[] | number | undefined): string[] {
  return String(header ?? '')
    .split(',')
    .map((field) => field.trim().toLowerCase())
    .filter((field) => field !== '');
}

describe('Vary with CORS on', () => {
  let h: Harness;
  let consoleAssets: string[];
  before(async () => {
    const manifest = await buildConsole();
    consoleAssets = Object.keys(manifest.files).filter((name) => name.startsWith('assets/'));
    h = await createHarness({ env: { CORS_ORIGINS: ORIGIN } });
  });
  after(() => h.close());

  /** Each route that sets Vary, the request that makes it, and the field it adds. */
  const routes = (): { url: string; headers?: Record<string, string>; own: string; status?: number }[] => [
    { url: '/', headers: { accept: 'text/html' }, own: 'accept' },
    { url: '/', headers: { accept: 'application/json' }, own: 'accept' },
    { url: '/openapi.json', own: 'host' },
    { url: '/console', own: 'accept-encoding' },
    { url: '/console/', own: 'accept-encoding' },
    ...consoleAssets.map((name) => ({ url: `/console/${name}`, own: 'accept-encoding' })),
    { url: '/docs/js/scalar.js', headers: { 'accept-encoding': 'br' }, own: 'accept-encoding' },
    { url: '/plants', headers: bearer(h.tokens.read), own: 'prefer' },
    { url: '/plants/export', headers: { ...bearer(h.tokens.read), accept: 'text/csv' }, own: 'accept' },
  ];

  it('lists both Origin and the route’s own field, for an allowed origin', async () => {
    for (const route of routes()) {
      const response = await h.request({
        method: 'GET',
        url: route.url,
        headers: { ...route.headers, origin: ORIGIN },
      });
      const label = `GET ${route.url} ${JSON.stringify(route.headers ?? {})}`;
      assert.equal(response.statusCode, 200, label);
      assert.equal(response.headers['access-control-allow-origin'], ORIGIN, label);
      const fields = varyFields(response.headers.vary);
      assert.ok(fields.includes('origin'), `${label}: Vary ${String(response.headers.vary)}`);
      assert.ok(fields.includes(route.own), `${label}: Vary ${String(response.headers.vary)}`);
      assert.equal(new Set(fields).size, fields.length, `${label}: no field twice in ${String(response.headers.vary)}`);
    }
  });

  it('lists Origin too for a request from no origin or another one (their answer lacks the CORS headers)', async () => {
    for (const route of routes()) {
      for (const origin of [undefined, 'http://elsewhere.example']) {
        const headers = origin === undefined ? { ...route.headers } : { ...route.headers, origin };
        const response = await h.request({ method: 'GET', url: route.url, headers });
        const label = `GET ${route.url} from ${origin ?? 'no origin'}`;
        assert.equal(response.headers['access-control-allow-origin'], undefined, label);
        const fields = varyFields(response.headers.vary);
        assert.ok(
          fields.includes('origin') && fields.includes(route.own),
          `${label}: ${String(response.headers.vary)}`,
        );
      }
    }
  });

  it('keeps Vary: Origin on the console page’s 304', async () => {
    const page = await h.request({ method: 'GET', url: '/console', headers: { origin: ORIGIN } });
    const again = await h.request({
      method: 'GET',
      url: '/console',
      headers: { origin: ORIGIN, 'if-none-match': String(page.headers.etag) },
    });
    assert.equal(again.statusCode, 304);
    assert.deepEqual(varyFields(again.headers.vary).sort(), ['accept-encoding', 'origin']);
  });
});
