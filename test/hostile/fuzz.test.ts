/**
 * Property-based fuzzing against a running server over real sockets: arbitrary
 * bodies, headers, methods, paths and query strings, written as raw bytes so no
 * client library tidies them first. Whatever arrives: an answer comes within a
 * bound (no hang), it is never a 5xx, and every failure is an Error record with a
 * catalogued code. Rate limiting and CORS are switched on (with a budget too big
 * to reach) so their code runs on every request.
 *
 * PLANTSTORE_FUZZ_RUNS sets the runs per property (default 150).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { isCataloguedError } from '../support/assertions.js';
import { listeningHarness, type ListeningHarness } from './listening.js';
import { rawExchange, type RawResponse } from './raw-http.js';

const RUNS = Number(process.env.PLANTSTORE_FUZZ_RUNS ?? 150);
const ANSWER_WITHIN_MS = 5000;

describe('fuzzing over sockets', () => {
  let h: ListeningHarness;
  before(async () => {
    h = await listeningHarness({ env: { RATE_LIMIT: '100000000', CORS_ORIGINS: 'https://app.example' } });
  });
  after(() => h.close());

  function assertWellFormed(method: string, response: RawResponse): void {
    assert.ok(
      response.status >= 100 && response.status < 500,
      `status ${response.status}: ${response.body.slice(0, 300)}`,
    );
    if (response.status < 400 || method.toUpperCase() === 'HEAD') return;
    let body: unknown;
    try {
      body = JSON.parse(response.body);
    } catch {
      assert.fail(`${response.status} without a JSON body: ${JSON.stringify(response.body.slice(0, 300))}`);
    }
    assert.ok(isCataloguedError(body), `${response.status} is not an Error record: ${response.body.slice(0, 300)}`);
  }

  /** A request with consistent framing (Content-Length matches the body), closed after the answer. */
  function request(
    method: string,
    target: string,
    headers: readonly (readonly [string, string])[],
    body: Buffer,
  ): Buffer {
    const lines = [
      `${method} ${target} HTTP/1.1`,
      'host: 127.0.0.1',
      'connection: close',
      ...headers.map(([n, v]) => `${n}: ${v}`),
    ];
    if (body.length > 0 || method === 'POST') lines.push(`content-length: ${body.length}`);
    return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body]);
  }

  const token = () => `Bearer ${h.tokens.all}`;
  const methods = fc.oneof(
    fc.constantFrom(
      'GET',
      'HEAD',
      'POST',
      'DELETE',
      'PUT',
      'PATCH',
      'OPTIONS',
      'TRACE',
      'CONNECT',
      'PROPFIND',
      'get',
      'pOsT',
    ),
    fc.stringMatching(/^[A-Z]{1,12}$/),
  );
  const knownPaths = fc.constantFrom(
    '/plants',
    '/plants/1',
    '/plants/-9223372036854775808',
    '/healthz',
    '/readyz',
    '/openapi.json',
    '/',
    '*',
    '/plants/',
    '//plants',
    '/plants/1/x',
    '/PLANTS',
    '/metrics',
    '/docs',
    '/docs/',
    '/webhooks',
  );
  const pathBytes = fc
    .uint8Array({ maxLength: 80 })
    .map((b) => Buffer.from(b).toString('latin1').replace(/[\s]/g, '%20'));
  const segments = fc.oneof(
    fc.string({ maxLength: 40 }).map(encodeURIComponent),
    pathBytes,
    fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
    fc.constantFrom('%', '%zz', '%00', '..', '%2e%2e', '%2F', '9223372036854775808', '-0', '00', '1e3', '0x1'),
  );
  const paths = fc.oneof(
    knownPaths,
    segments.map((s) => `/plants/${s}`),
    segments.map((s) => `/${s}`),
  );
  const queryValue = fc.oneof(
    fc.string({ maxLength: 30 }).map(encodeURIComponent),
    segments,
    fc.constantFrom('', '1', '1000', '1001', '0', '-1', '1.5', '1e2', '[]', '%', 'a&limit=2'),
  );
  const queries = fc
    .array(fc.tuple(fc.constantFrom('limit', 'after', 'tag', 'limit[]', 'x', '__proto__', 'constructor'), queryValue), {
      maxLength: 5,
    })
    .map((pairs) => (pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`));
  // Header values as a client could put on the wire: any byte but CR, LF and NUL (those break framing, tested
  // elsewhere).
  const headerValue = fc
    .oneof(
      fc.string({ maxLength: 60 }),
      fc.uint8Array({ maxLength: 60 }).map((b) => Buffer.from(b).toString('latin1')),
      fc.constantFrom(
        'Bearer',
        'Bearer ',
        'bearer pst_',
        'Basic YTpi',
        'Bearer pst_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
        'application/json; charset=latin1',
        'application/json;;',
        'text/plain',
        'https://app.example',
        'null',
      ),
    )
    .map((v) => v.replace(/[\r\n\0]/g, ''));
  const headerName = fc.oneof(
    fc.constantFrom(
      'authorization',
      'content-type',
      'accept',
      'origin',
      'x-request-id',
      'access-control-request-method',
      'accept-encoding',
      'expect',
      'x-forwarded-for',
      'if-none-match',
      'upgrade',
      'connection',
      'range',
      'cookie',
    ),
    fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
  );
  const headers = fc.array(fc.tuple(headerName, headerValue), { maxLength: 8 });
  const jsonBodies = fc.oneof(
    fc.json().map((j) => Buffer.from(j)),
    fc
      .record(
        {
          id: fc.oneof(fc.bigInt().map(String), fc.double().map(String), fc.constantFrom('1e400', '"1"', 'null')),
          name: fc.string().map((s) => JSON.stringify(s)),
          tag: fc.string().map((s) => JSON.stringify(s)),
        },
        { requiredKeys: [] },
      )
      .map((r) =>
        Buffer.from(
          `{${Object.entries(r)
            .map(([k, v]) => `"${k}": ${v}`)
            .join(', ')}}`,
        ),
      ),
    fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
    fc.constant(Buffer.alloc(0)),
  );

  it('arbitrary bodies to POST /plants', async () => {
    await fc.assert(
      fc.asyncProperty(
        jsonBodies,
        fc.constantFrom(
          'application/json',
          'application/json; charset=utf-8',
          'APPLICATION/JSON',
          'text/plain',
          'application/x-www-form-urlencoded',
        ),
        async (body, contentType) => {
          const response = await rawExchange(
            h.url,
            request(
              'POST',
              '/plants',
              [
                ['authorization', token()],
                ['content-type', contentType],
              ],
              body,
            ),
            ANSWER_WITHIN_MS,
          );
          assertWellFormed('POST', response);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('arbitrary methods and headers', async () => {
    await fc.assert(
      fc.asyncProperty(methods, knownPaths, headers, fc.boolean(), async (method, path, extra, withToken) => {
        const all = withToken ? [['authorization', token()] as const, ...extra] : extra;
        const body = method === 'POST' ? Buffer.from('{"id": 1, "name": "fuzz"}') : Buffer.alloc(0);
        const response = await rawExchange(h.url, request(method, path, all, body), ANSWER_WITHIN_MS);
        assertWellFormed(method, response);
      }),
      { numRuns: RUNS },
    );
  });

  it('arbitrary paths and query strings', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('GET', 'DELETE', 'HEAD'), paths, queries, async (method, path, query) => {
        const response = await rawExchange(
          h.url,
          request(method, `${path}${query}`, [['authorization', token()]], Buffer.alloc(0)),
          ANSWER_WITHIN_MS,
        );
        assertWellFormed(method, response);
      }),
      { numRuns: RUNS },
    );
  });
});
