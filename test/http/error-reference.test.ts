/** docs/errors.md is what `npm run errors:reference` writes from the error catalogue: an entry added or reworded there
 * makes it stale. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ERROR_REFERENCE_PATH, renderErrorReference } from '../../scripts/error-reference.js';
import { Errors } from '../../src/http/errors.js';

describe('docs/errors.md', () => {
  it('is what the error catalogue generates', () => {
    assert.ok(
      readFileSync(ERROR_REFERENCE_PATH, 'utf8') === renderErrorReference(),
      'docs/errors.md is stale: run `npm run errors:reference` and commit the result',
    );
  });

  it('has a row for every code of the catalogue', () => {
    const text = readFileSync(ERROR_REFERENCE_PATH, 'utf8');
    for (const [name, { code, status }] of Object.entries(Errors))
      assert.ok(text.includes(`| ${code} | ${status} | ${name} |`), `${name} (${code}) is missing`);
  });
});
