/**
 * The service compiles its validators without checking the schemas against the
 * JSON Schema meta-schema (it cost a tenth of start-up; see createAjv in
 * src/http/validation.ts). This test does that check instead, for every schema of
 * every documented route and every shared schema, with the same keywords and
 * strictness the service uses.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifySchema } from 'fastify';
import { createAjv, toRuntimeSchema } from '../../src/http/validation.js';
import { createHarness, type Harness } from '../support/harness.js';

const PARTS = ['body', 'params', 'querystring', 'response'] as const;

/** A schema, or (content per media type, as a streamed body or response has) one per type. */
function perMediaType(schema: object): object[] {
  const content = Reflect.get(schema, 'content') as Record<string, { schema: object }> | undefined;
  return content === undefined ? [schema] : Object.values(content).map((media) => media.schema);
}

function schemasOf(part: (typeof PARTS)[number], schema: FastifySchema): object[] {
  const value = schema[part];
  if (typeof value !== 'object' || value === null) return [];
  if (part === 'body') return perMediaType(value);
  if (part !== 'response') return [value];
  return Object.values(value as Record<string, object>).flatMap(perMediaType);
}

describe('route schemas against the JSON Schema meta-schema', () => {
  let h: Harness;
  before(async () => {
    h = await createHarness();
  });
  after(() => h.close());

  it('every part of every documented route, and every shared schema, is a valid schema', () => {
    const shared = Object.values(h.app.getSchemas()) as object[];
    assert.ok(h.app.documentedRoutes.length >= 15, `only ${h.app.documentedRoutes.length} documented routes`);
    assert.ok(shared.length >= 10, `only ${shared.length} shared schemas`);
    let checked = 0;
    for (const route of h.app.documentedRoutes) {
      for (const part of PARTS) {
        for (const one of schemasOf(part, route.schema)) {
          const forText = part === 'querystring' || part === 'params';
          const ajv = createAjv(forText, true);
          for (const schema of shared) ajv.addSchema(toRuntimeSchema(schema, forText));
          const runtime = toRuntimeSchema(one, forText);
          assert.equal(
            ajv.validateSchema(runtime),
            true,
            `${route.method} ${route.url} ${part}: ${ajv.errorsText(ajv.errors)}`,
          );
          if (part !== 'response') ajv.compile(runtime); // as the service does: strict mode throws on an unknown keyword
          checked++;
        }
      }
    }
    assert.ok(checked >= 25, `only ${checked} schemas checked`);
  });

  it('the check can fail: a misspelt type is caught', () => {
    const ajv = createAjv(false, true);
    assert.equal(ajv.validateSchema({ type: 'object', properties: { name: { type: 'strin' } } }), false);
    assert.throws(() => ajv.compile({ type: 'object', properties: { name: { type: 'strin' } } }), /schema is invalid/);
  });
});
