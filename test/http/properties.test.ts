/**
 * Property-based tests: whatever a client sends, the service answers without a 5xx
 * and every failure is an Error record with a catalogued code.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { isCataloguedError } from '../support/assertions.js';
import { createHarness, type Harness } from '../support/harness.js';

const RUNS = Number(process.env.PLANTSTORE_PROPERTY_RUNS ?? 300);

describe('arbitrary requests', () => {
  let h: Harness;
  before(async () => {
    h = await createHarness();
  });
  after(() => h.close());

  function assertWellFormed(response: { statusCode: number; body: string }): void {
    assert.ok(response.statusCode < 500, `status ${response.statusCode}: ${response.body}`);
    if (response.statusCode >= 400) {
      assert.ok(isCataloguedError(JSON.parse(response.body)), `not an Error record: ${response.body}`);
    }
  }

  const idLike = fc.oneof(
    fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map(String),
    fc.double().map((d) => (Number.isFinite(d) ? String(d) : '1e999')),
    fc.constantFrom('1e400', '-0', '0.0', '1E+2', '"1"', 'null', 'true', '[]', '{}'),
  );
  const textLike = fc.oneof(
    fc.string(),
    fc.string({ unit: 'binary', maxLength: 300 }),
    fc.constant(''),
    fc.string({ minLength: 190, maxLength: 210 }),
  );
  const plantLike = fc
    .record(
      {
        id: idLike,
        name: textLike.map((s) => JSON.stringify(s)),
        tag: textLike.map((s) => JSON.stringify(s)),
        extra: fc.json(),
      },
      { requiredKeys: [] },
    )
    .map(
      (fields) =>
        `{${Object.entries(fields)
          .map(([k, v]) => `${JSON.stringify(k)}: ${v}`)
          .join(', ')}}`,
    );
  const bodies = fc.oneof(
    plantLike,
    fc.json(),
    fc.string(),
    fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b).toString('latin1')),
  );

  it('bodies: never a 5xx; 200s echo a Plant, failures are Error records', async () => {
    await fc.assert(
      fc.asyncProperty(bodies, async (payload) => {
        const response = await h.request({
          method: 'POST',
          url: '/plants',
          payload,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${h.tokens.write}` },
        });
        assertWellFormed(response);
        if (response.statusCode === 200) {
          const plant = response.json();
          assert.deepEqual(
            Object.keys(plant).filter((k) => k !== 'name' && k !== 'tag'),
            [],
          );
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('headers: arbitrary Authorization and Content-Type never produce a 5xx or a non-Error failure', async () => {
    const header = fc.oneof(
      fc.string(),
      fc.constantFrom('Bearer', 'Bearer ', 'bearer pst_', `Bearer ${'a'.repeat(5000)}`),
    );
    await fc.assert(
      fc.asyncProperty(
        header,
        header,
        fc.constantFrom('POST', 'GET', 'DELETE', 'PUT'),
        async (authorization, contentType, method) => {
          const headers: Record<string, string> = {};
          // Only values a client could actually send on the wire (no CR/LF or other controls).
          if (/^[\t\x20-\x7e]*$/.test(authorization)) headers.authorization = authorization;
          if (/^[\t\x20-\x7e]*$/.test(contentType)) headers['content-type'] = contentType;
          const response = await h.request({ method, url: '/plants', headers, payload: '{"id": 1, "name": "a"}' });
          assertWellFormed(response);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('paths and query strings: never a 5xx', async () => {
    const segment = fc.oneof(
      fc.string(),
      fc.bigInt().map(String),
      fc.constantFrom('%', '%zz', '..', '9223372036854775808', '-0', '00'),
    );
    await fc.assert(
      fc.asyncProperty(segment, segment, async (id, query) => {
        const url = `/plants/${encodeURIComponent(id)}?limit=${encodeURIComponent(query)}&after=${encodeURIComponent(id)}`;
        for (const method of ['GET', 'DELETE'] as const) {
          assertWellFormed(await h.request({ method, url, headers: { authorization: `Bearer ${h.tokens.all}` } }));
        }
        assertWellFormed(
          await h.request({
            method: 'GET',
            url: `/plants?limit=${encodeURIComponent(query)}&tag=${encodeURIComponent(id)}&after=${encodeURIComponent(query)}`,
            headers: { authorization: `Bearer ${h.tokens.all}` },
          }),
        );
      }),
      { numRuns: RUNS },
    );
  });
});
