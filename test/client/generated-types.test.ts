/**
 * The client's types are generated from the OpenAPI document; this fails when
 * the checked-in file no longer matches what the service serves.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { CLIENT_TYPES_PATH, generateClientTypes } from '../../scripts/generate-client-types.js';

describe('packages/client/src/openapi-types.ts', () => {
  it('is current with GET /openapi.json (otherwise run: npm run client:generate)', async () => {
    const expected = await generateClientTypes();
    const checkedIn = readFileSync(CLIENT_TYPES_PATH, 'utf8');
    assert.ok(
      checkedIn === expected,
      'packages/client/src/openapi-types.ts is stale: run `npm run client:generate` and commit the result',
    );
  });

  it('types int64 ids as bigint', () => {
    const text = readFileSync(CLIENT_TYPES_PATH, 'utf8');
    assert.match(text, /Format: int64[\s\S]*?id: bigint;/);
  });
});
