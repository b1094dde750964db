/**
 * The README names the error codes a client meets first and points at docs/errors.md for the rest (which
 * test/http/error-reference.test.ts keeps equal to the catalogue): each code it names must be the catalogue's, under
 * that name.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { Errors } from '../src/http/errors.js';

it("README's error codes are the catalogue's, and it points at the full list", () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  assert.ok(readme.includes('[docs/errors.md](docs/errors.md)'), 'README does not link docs/errors.md');
  const named = [...readme.matchAll(/\b(\d{5})\s+`([A-Z_]+)`/g)];
  assert.ok(named.length >= 5, `README names only ${named.length} error codes`);
  const byName: Readonly<Record<string, { code: number }>> = Errors;
  for (const [, code, name] of named) {
    assert.ok(name !== undefined && name in byName, `README names ${name}, which is not in the catalogue`);
    assert.equal(byName[name]?.code, Number(code), `README gives ${name} the code ${code}`);
  }
});
