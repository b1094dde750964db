/**
 * Arrows point down: the stores (src/store/) build on the domain core and the configuration only, never on a
 * feature folder (plants, webhooks, tokens, events, http...), so a feature can change without its stores
 * following it and a store can be read without the features around it.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const STORE = join(SRC, 'store');
/** The folders of src/ a store may import from. */
const BELOW = new Set(['store', 'domain', 'config']);
const SPECIFIER = /(?:from|import)\s*\(?\s*'(\.[^']+)'/g;

it('nothing in src/store/ imports from a feature folder', () => {
  const found: string[] = [];
  for (const file of readdirSync(STORE, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.ts')) continue;
    const path = join(STORE, file);
    for (const [, specifier = ''] of readFileSync(path, 'utf8').matchAll(SPECIFIER)) {
      const folder = relative(SRC, resolve(dirname(path), specifier)).split(/[\\/]/)[0] ?? '';
      if (!BELOW.has(folder)) found.push(`src/store/${file} imports ${specifier}`);
    }
  }
  assert.deepEqual(found, []);
});
