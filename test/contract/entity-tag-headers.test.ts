/**
 * If-Match and If-None-Match, held to RFC 9110's grammar by the document and by the service alike: every operation the
 * document gives one of them states the grammar as its pattern, a value the pattern admits is never refused as
 * malformed (it may well fail as a precondition: 412, 304, 404), and a value it refuses gets 400 INVALID_PARAMETER
 * naming the header, on every such operation and both stores.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { assertError } from '../support/assertions.js';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, type Harness } from '../support/harness.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- a parsed JSON document

/** Well-formed by RFC 9110: `*`, or a list of `"..."` / `W/"..."` (an empty opaque tag and empty list elements too). */
const WELL_FORMED = ['*', '""', '"1"', 'W/"1"', '"1", "2"', '"1",,W/"2"', ', "7"', '"9",', '"a-b_c!#~"'];
/** Malformed: what a fuzzer or a careless client sends. */
const MALFORMED = ['$', '', '1', 'W/1', '"1', '"1" "2"', '*, "1"', 'w/"1"', '"a"b"', ',', '"a b"', 'W/ "1"'];

const WEBHOOK = 'whk_0123456789abcdef0123etag';
const HEADERS = ['if-match', 'if-none-match'];

/** A request to the operation that would succeed but for the condition: an existing plant, a valid body. */
function requestOf(method: string, path: string): { url: string; payload?: string; contentType?: string } {
  const url = path.replace('{id}', path.startsWith('/webhooks') ? WEBHOOK : '1');
  if (method === 'post') return { url, payload: '{"id": 2, "name": "Fern"}', contentType: 'application/json' };
  if (method === 'put') return { url, payload: '{"name": "Fern"}', contentType: 'application/json' };
  if (method === 'patch')
    return {
      url,
      payload: path.startsWith('/webhooks') ? '{"description": "d"}' : '{"tag": "green"}',
      contentType: 'application/merge-patch+json',
    };
  return { url };
}

for (const backend of testBackends()) {
  describe(`If-Match and If-None-Match: the document's grammar is the service's (${backend.name})`, () => {
    let h: Harness;
    let doc: Json;
    /** Every operation and the entity-tag headers it declares. */
    let operations: { method: string; path: string; header: Json }[];
    before(async () => {
      h = await createHarness({ backend });
      doc = (await h.request({ method: 'GET', url: '/openapi.json' })).json();
      operations = Object.entries<Json>(doc.paths).flatMap(([path, item]) =>
        Object.entries<Json>(item).flatMap(([method, operation]) =>
          ((operation.parameters ?? []) as Json[])
            .filter((p) => p.in === 'header' && HEADERS.includes(String(p.name).toLowerCase()))
            .map((header) => ({ method, path, header })),
        ),
      );
      await h.store.webhooks.insertSubscription({
        id: WEBHOOK,
        url: 'http://127.0.0.1:9/hook',
        secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        eventTypes: ['plant.created'],
        createdAt: new Date(),
      });
    });
    after(() => h.close());

    /** Puts plant 1 back (a DELETE or PUT before may have removed or changed it) and drops plant 2. */
    async function resetPlants(): Promise<void> {
      await h.request({ method: 'DELETE', url: '/plants/2', headers: bearer(h.tokens.all) });
      const put = {
        method: 'POST',
        url: '/plants',
        headers: { ...bearer(h.tokens.all), 'content-type': 'application/json' },
      };
      await h.request({ ...put, payload: '{"id": 1, "name": "Monstera"}' });
    }

    it('every operation that reads one states the grammar as its pattern', () => {
      const named = operations.map(({ method, path, header }) => `${method} ${path} ${header.name}`).sort();
      for (const expected of [
        'delete /plants/{id} if-match',
        'get /plants/{id} if-none-match',
        'patch /plants/{id} if-match',
        'patch /webhooks/{id} if-match',
        'post /plants if-none-match',
        'put /plants/{id} if-none-match',
      ])
        assert.ok(named.includes(expected), `${expected} in ${named.join(', ')}`);
      for (const { method, path, header } of operations) {
        const pattern = new RegExp(header.schema.pattern, 'u');
        for (const value of WELL_FORMED) assert.ok(pattern.test(value), `${method} ${path} ${header.name}: ${value}`);
        for (const value of MALFORMED) assert.ok(!pattern.test(value), `${method} ${path} ${header.name}: ${value}`);
        assert.match(header.description, /RFC 9110/);
      }
    });

    it('a well-formed value is not refused as malformed, a malformed one is a 400 naming the header; the document agrees', async () => {
      for (const { method, path, header } of operations) {
        const pattern = new RegExp(header.schema.pattern ?? '^$', 'u');
        const name = String(header.name);
        const shown = name === 'if-match' ? 'If-Match' : 'If-None-Match';
        for (const value of [...WELL_FORMED, ...MALFORMED]) {
          await resetPlants();
          const { url, payload, contentType } = requestOf(method, path);
          const response = await h.request({
            method: method.toUpperCase() as 'GET',
            url,
            headers: {
              ...bearer(h.tokens.all),
              ...(contentType === undefined ? {} : { 'content-type': contentType }),
              [name]: value,
            },
            ...(payload === undefined ? {} : { payload }),
          });
          const what = `${method} ${path} ${shown}: ${JSON.stringify(value)} -> ${response.statusCode} ${response.body}`;
          if (WELL_FORMED.includes(value)) {
            assert.notEqual(response.statusCode, 400, what);
            assert.ok(response.statusCode < 500, what);
          } else assertError(response, Errors.INVALID_PARAMETER, `${shown} must be * or a comma-separated list`);
          assert.equal(pattern.test(value), WELL_FORMED.includes(value), `the document on ${what}`);
        }
      }
    });
  });
}
