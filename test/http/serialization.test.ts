/**
 * Response serialisers are compiled with only the shared schemas a response refers
 * to (src/http/serialization.ts), found through references of references; and what
 * they write is what the full set would give.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fastJson from 'fast-json-stringify';
import { referencedSchemas } from '../../src/http/serialization.js';

const Attempt = { $id: 'Attempt', type: 'object', properties: { n: { type: 'integer' } } } as const;
const Delivery = {
  $id: 'Delivery',
  type: 'object',
  properties: { attempts: { type: 'array', items: { $ref: 'Attempt#' } } },
} as const;
const Unrelated = { $id: 'Unrelated', type: 'object', properties: { x: { type: 'string' } } } as const;
const shared = { Attempt, Delivery, Unrelated };

describe('response serialisers and shared schemas', () => {
  it('picks the schemas a response refers to, directly or through another, and no others', () => {
    assert.deepEqual(referencedSchemas({ type: 'array', items: { $ref: 'Delivery' } }, shared), { Delivery, Attempt });
    assert.deepEqual(referencedSchemas({ $ref: 'Attempt' }, shared), { Attempt });
    assert.deepEqual(referencedSchemas({ type: 'object', properties: { a: { type: 'string' } } }, shared), {});
  });

  it('writes the same JSON as with every shared schema', () => {
    const schema = { type: 'array', items: { $ref: 'Delivery' } } as const;
    const value = [{ attempts: [{ n: 1 }, { n: 2 }] }];
    assert.equal(
      fastJson(schema, { schema: referencedSchemas(schema, shared) })(value),
      fastJson(schema, { schema: shared })(value),
    );
  });
});
