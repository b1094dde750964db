/**
 * The service compiles its validators without checking the schemas against the
 * JSON Schema meta-schema (it cost a tenth of start-up; see createAjv in
 * src/http/validation.ts). This test does that check instead, for every schema of
 * every operation, with the same keywords and strictness the service uses.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { routeSchema, type Operation } from '../../src/http/operation.js';
import { createAjv, toRuntimeSchema } from '../../src/http/validation.js';
import { plantOperations } from '../../src/plants/routes.js';
import { health, readiness } from '../../src/system/routes.js';
import { webhookOperations } from '../../src/webhooks/routes.js';

const operations: readonly Operation[] = [...plantOperations, ...webhookOperations, health, readiness];

describe('operation schemas against the JSON Schema meta-schema', () => {
  for (const operation of operations) {
    it(`${operation.operationId}: every part is a valid schema`, () => {
      const parts = Object.entries(routeSchema(operation));
      assert.ok(parts.length > 0);
      for (const [part, schema] of parts) {
        const schemas = part === 'response' ? Object.values(schema as Record<string, object>) : [schema as object];
        for (const one of schemas) {
          const forText = part === 'querystring' || part === 'params';
          const ajv = createAjv(forText, true);
          const runtime = toRuntimeSchema(one, forText);
          assert.equal(ajv.validateSchema(runtime), true, `${part}: ${ajv.errorsText(ajv.errors)}`);
          if (part !== 'response') ajv.compile(runtime); // as the service does: strict mode throws on an unknown keyword
        }
      }
    });
  }

  it('the check can fail: a misspelt type is caught', () => {
    const ajv = createAjv(false, true);
    assert.equal(ajv.validateSchema({ type: 'object', properties: { name: { type: 'strin' } } }), false);
    assert.throws(() => ajv.compile({ type: 'object', properties: { name: { type: 'strin' } } }), /schema is invalid/);
  });
});
