/** The README documents the error catalogue; this keeps it from drifting from the code. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { Errors } from '../src/http/errors.js';

it('README lists every error catalogue entry with its code and status', () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  for (const [name, entry] of Object.entries(Errors)) {
    assert.ok(
      readme.includes(`| ${entry.code} | ${entry.status} | ${name} |`),
      `${name} (${entry.code}) missing from README`,
    );
  }
});
