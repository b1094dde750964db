/** GET /plants/export chooses its format by `format` and by Accept (RFC 9110 12.5.1), and says so in its headers. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { assertError } from '../support/assertions.js';
import { bearer, createHarness, postPlant, type Harness } from '../support/harness.js';

describe('export content negotiation', () => {
  let h: Harness;
  before(async () => {
    h = await createHarness();
    assert.equal((await postPlant(h, '{"id": 1, "name": "Fern"}')).statusCode, 200);
  });
  after(() => h.close());

  const exported = (accept: string | undefined, query = '', method: 'GET' | 'HEAD' = 'GET') =>
    h.request({
      method,
      url: `/plants/export${query}`,
      headers: { ...bearer(h.tokens.read), ...(accept === undefined ? {} : { accept }) },
    });

  const cases: [accept: string | undefined, query: string, expected: RegExp][] = [
    [undefined, '', /^application\/x-ndjson/],
    ['*/*', '', /^application\/x-ndjson/],
    ['text/csv', '', /^text\/csv/],
    ['text/*', '', /^text\/csv/],
    ['application/x-ndjson;q=0.5, text/csv', '', /^text\/csv/],
    ['text/csv;q=0, */*', '', /^application\/x-ndjson/],
    ['text/csv, application/x-ndjson;q=0.9', '', /^text\/csv/],
    ['text/csv', '?format=ndjson', /^406$/],
    ['*/*', '?format=csv', /^text\/csv/],
    ['text/csv;q=0', '', /^406$/],
    ['application/json', '', /^406$/],
  ];
  for (const [accept, query, expected] of cases) {
    it(`Accept: ${accept ?? '(none)'}${query} answers ${expected.source}`, async () => {
      for (const method of ['GET', 'HEAD'] as const) {
        const response = await exported(accept, query, method);
        if (expected.source === '^406$') {
          if (method === 'GET') assertError(response, Errors.NOT_ACCEPTABLE, 'application/x-ndjson');
          else assert.equal(response.statusCode, 406);
        } else {
          assert.equal(response.statusCode, 200, method);
          assert.match(String(response.headers['content-type']), expected, method);
        }
        assert.match(String(response.headers.vary), /Accept/, method);
        assert.equal(response.headers['cache-control'], 'no-store', method);
      }
    });
  }

  it('the document lists the 406 and the Accept header of the export', async () => {
    const doc = (await h.request({ method: 'GET', url: '/openapi.json' })).json();
    const operation = doc.paths['/plants/export'].get;
    assert.ok(operation.responses['406']);
    assert.ok(operation.parameters.some((p: { in: string; name: string }) => p.in === 'header' && p.name === 'accept'));
  });
});
