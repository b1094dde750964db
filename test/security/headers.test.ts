/**
 * Response headers a JSON API should send, and CORS: off by default, an exact
 * allow-list when CORS_ORIGINS is set. Over real sockets.
 */
import helmet, { type HelmetOptions } from 'helmet';
import assert from 'node:assert/strict';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/index.js';
import { Errors } from '../../src/http/errors.js';
import { securityHeaderLists } from '../../src/plugins/external/helmet.js';
import { assertErrorRecord, listeningHarness, type ListeningHarness } from '../hostile/listening.js';
import { head, rawExchange } from '../hostile/raw-http.js';

const ALLOWED = 'https://app.example.com';
/** As helmet writes it: directives joined by ';' with no space. */
const API_CONTENT_SECURITY_POLICY = "default-src 'none';frame-ancestors 'none'";

async function send(
  url: string,
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; body: string; headers: Headers }> {
  const response = await fetch(`${url}${path}`, init);
  return { status: response.status, body: await response.text(), headers: response.headers };
}

function assertApiHeaders(headers: Headers): void {
  assert.equal(headers.get('x-content-type-options'), 'nosniff');
  assert.equal(headers.get('content-security-policy'), API_CONTENT_SECURITY_POLICY);
  assert.equal(headers.get('cache-control'), 'no-store');
  assert.equal(headers.get('referrer-policy'), 'no-referrer');
  assert.equal(headers.get('x-frame-options'), 'DENY');
}

describe('security headers', () => {
  let h: ListeningHarness;
  before(async () => {
    h = await listeningHarness();
  });
  after(() => h.close());

  it('JSON successes, failures and empty responses carry nosniff, a deny-all CSP, no-store, no-referrer; no HSTS unless configured', async () => {
    const auth = { authorization: `Bearer ${h.tokens.all}` };
    const responses = [
      await send(h.url, '/plants', { headers: auth }),
      await send(h.url, '/plants', {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: '{"id": 9, "name": "h"}',
      }),
      await send(h.url, '/plants/9', { method: 'DELETE', headers: auth }),
      await send(h.url, '/plants'),
      await send(h.url, '/nowhere'),
      await send(h.url, '/openapi.json'),
    ];
    assert.deepEqual(
      responses.map((r) => r.status),
      [200, 200, 204, 401, 404, 200],
    );
    for (const response of responses) {
      assertApiHeaders(response.headers);
      assert.equal(response.headers.get('strict-transport-security'), null);
    }
  });

  it('answers written below Fastify (431 and friends) carry nosniff and no-store too', async () => {
    const response = await rawExchange(h.url, head('GET', '/healthz', { 'x-big': 'a'.repeat(20_000) }));
    assert.equal(response.status, 431);
    assert.equal(response.headers['x-content-type-options'], 'nosniff');
    assert.equal(response.headers['cache-control'], 'no-store');
  });

  it('the /docs page keeps the policy its own routes set (scripts and styles it needs), not the JSON one', async () => {
    const docs = await send(h.url, '/docs');
    if (docs.status === 404) return; // no docs page in this build
    assert.match(docs.headers.get('content-type') ?? '', /^text\/html/);
    assert.notEqual(docs.headers.get('content-security-policy'), API_CONTENT_SECURITY_POLICY);
    assert.match(docs.headers.get('content-security-policy') ?? '', /script-src/);
    assert.equal(docs.headers.get('x-content-type-options'), 'nosniff');
  });

  it('HSTS_MAX_AGE adds Strict-Transport-Security', async () => {
    const hsts = await listeningHarness({ env: { HSTS_MAX_AGE: '31536000' } });
    try {
      assert.equal((await send(hsts.url, '/healthz')).headers.get('strict-transport-security'), 'max-age=31536000');
    } finally {
      await hsts.close();
    }
  });
});

describe('CORS off (the default)', () => {
  let h: ListeningHarness;
  before(async () => {
    h = await listeningHarness();
  });
  after(() => h.close());

  it('no Access-Control headers for any origin; a preflight is just an OPTIONS request (405)', async () => {
    const simple = await send(h.url, '/healthz', { headers: { origin: ALLOWED } });
    assert.equal(simple.headers.get('access-control-allow-origin'), null);
    const preflight = await send(h.url, '/plants', {
      method: 'OPTIONS',
      headers: { origin: ALLOWED, 'access-control-request-method': 'POST' },
    });
    assertErrorRecord(preflight, Errors.METHOD_NOT_ALLOWED);
    assert.equal(preflight.headers.get('access-control-allow-origin'), null);
  });
});

describe('CORS with CORS_ORIGINS', () => {
  let h: ListeningHarness;
  before(async () => {
    h = await listeningHarness({
      env: { CORS_ORIGINS: `${ALLOWED}, http://localhost:3000`, RATE_LIMIT: '2', RATE_LIMIT_ANONYMOUS: '1000' },
    });
  });
  after(() => h.close());

  it('an allowed origin gets its preflight answered (204) with the methods and headers the API takes', async () => {
    const preflight = await send(h.url, '/plants', {
      method: 'OPTIONS',
      headers: {
        origin: ALLOWED,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), ALLOWED);
    assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /POST/);
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /Authorization/i);
    assert.equal(preflight.headers.get('access-control-allow-credentials'), null);
    assert.match(preflight.headers.get('vary') ?? '', /Origin/i);
  });

  it('a browser may change plants conditionally and ask for counts: PATCH and PUT with If-Match, Prefer, and the ETag and counts readable', async () => {
    for (const method of ['PATCH', 'PUT']) {
      const preflight = await send(h.url, '/plants/1', {
        method: 'OPTIONS',
        headers: {
          origin: ALLOWED,
          'access-control-request-method': method,
          'access-control-request-headers': 'authorization, content-type, if-match',
        },
      });
      assert.equal(preflight.status, 204);
      assert.match(preflight.headers.get('access-control-allow-methods') ?? '', new RegExp(method));
      assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /If-Match/i);
    }
    const counting = await send(h.url, '/plants', {
      method: 'OPTIONS',
      headers: {
        origin: ALLOWED,
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization, prefer',
      },
    });
    assert.match(counting.headers.get('access-control-allow-headers') ?? '', /Prefer/i);
    const answer = await send(h.url, '/plants', {
      headers: { origin: ALLOWED, authorization: `Bearer ${h.tokens.read}`, prefer: 'count=exact' },
    });
    const exposed = answer.headers.get('access-control-expose-headers') ?? '';
    for (const name of ['ETag', 'X-Total-Count', 'Preference-Applied']) assert.match(exposed, new RegExp(name, 'i'));
    assert.match(answer.headers.get('vary') ?? '', /Origin.*Prefer|Prefer.*Origin/i);
  });

  it('an allowed origin can read responses, failures and the headers that matter', async () => {
    const answer = await send(h.url, '/plants', {
      headers: { origin: 'http://localhost:3000', authorization: `Bearer ${h.tokens.read}` },
    });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('access-control-allow-origin'), 'http://localhost:3000');
    const exposed = answer.headers.get('access-control-expose-headers') ?? '';
    for (const name of ['X-Request-Id', 'Link', 'Retry-After', 'RateLimit-Remaining', 'WWW-Authenticate'])
      assert.match(exposed, new RegExp(name, 'i'));
    // Even a 429 is readable, so a browser client can honour Retry-After.
    await send(h.url, '/plants', { headers: { origin: ALLOWED, authorization: `Bearer ${h.tokens.read}` } });
    const limited = await send(h.url, '/plants', {
      headers: { origin: ALLOWED, authorization: `Bearer ${h.tokens.read}` },
    });
    assertErrorRecord(limited, Errors.RATE_LIMITED);
    assert.equal(limited.headers.get('access-control-allow-origin'), ALLOWED);
  });

  it('any other origin gets no CORS headers at all, and its preflight falls through to a 405 Error record', async () => {
    for (const origin of [
      'https://evil.example',
      'https://app.example.com.evil.example',
      'null',
      'HTTPS://APP.EXAMPLE.COM',
    ]) {
      const preflight = await send(h.url, '/plants', {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST' },
      });
      assertErrorRecord(preflight, Errors.METHOD_NOT_ALLOWED);
      assert.equal(preflight.headers.get('access-control-allow-origin'), null, origin);
      assert.equal(
        (await send(h.url, '/healthz', { headers: { origin } })).headers.get('access-control-allow-origin'),
        null,
      );
    }
  });

  it('OPTIONS requests that are not preflights get Error records (the CORS route uses our parser and error handler)', async () => {
    assertErrorRecord(await send(h.url, '/nowhere', { method: 'OPTIONS' }), Errors.ROUTE_NOT_FOUND);
    // Found by the socket fuzzer: Fastify's default error handler answered this one.
    assertErrorRecord(
      await send(h.url, '/nowhere', { method: 'OPTIONS', headers: { 'content-type': '' } }),
      Errors.UNSUPPORTED_MEDIA_TYPE,
    );
    assertErrorRecord(
      await send(h.url, '/nowhere', { method: 'OPTIONS', headers: { 'content-type': 'text/plain' }, body: 'x' }),
      Errors.UNSUPPORTED_MEDIA_TYPE,
    );
  });
});

describe('security header values', () => {
  /** The headers helmet's middleware sets on a response with these options. */
  function helmetHeaders(options: HelmetOptions): Map<string, string> {
    const request = new IncomingMessage(new Socket());
    const response = new ServerResponse(request);
    helmet(options)(request, response, () => {});
    return new Map(Object.entries(response.getHeaders()).map(([name, value]) => [name, String(value)]));
  }
  const off = {
    crossOriginEmbedderPolicy: false,
    crossOriginOpenerPolicy: false,
    crossOriginResourcePolicy: false,
    originAgentCluster: false,
    xDnsPrefetchControl: false,
    xDownloadOptions: false,
    xPermittedCrossDomainPolicies: false,
    xPoweredBy: false,
    xXssProtection: false,
  } as const;

  for (const hstsMaxAgeSeconds of [0, 31536000]) {
    it(`are helmet's for the same options (HSTS_MAX_AGE ${hstsMaxAgeSeconds})`, () => {
      const limits = { ...loadConfig({}).limits, hstsMaxAgeSeconds };
      const { everyResponse, apiResponses } = securityHeaderLists(limits);
      const common = {
        ...off,
        referrerPolicy: { policy: 'no-referrer' },
        strictTransportSecurity:
          hstsMaxAgeSeconds > 0 ? { maxAge: hstsMaxAgeSeconds, includeSubDomains: false } : false,
        xContentTypeOptions: true,
      } as const;
      assert.deepEqual(
        new Map(everyResponse),
        helmetHeaders({ ...common, contentSecurityPolicy: false, xFrameOptions: false }),
      );
      const api = helmetHeaders({
        ...common,
        contentSecurityPolicy: {
          useDefaults: false,
          directives: { 'default-src': ["'none'"], 'frame-ancestors': ["'none'"] },
        },
        xFrameOptions: { action: 'deny' },
      });
      // helmet has no Cache-Control middleware (it dropped nocache in v4).
      api.set('cache-control', 'no-store');
      assert.deepEqual(new Map(apiResponses), api);
    });
  }
});
