/**
 * `import { createPlantStoreClient } from 'plantstore/client'` resolves, through
 * package.json "exports", to what `npm run build` emits for src/client/index.ts;
 * and the `plantstore` bin is the bundled CLI, which `npm start` runs too.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { SERVICE_ENTRY } from '../../scripts/bundle-service.js';

interface PackageJson {
  bin: Record<string, string>;
  scripts: Record<string, string>;
  exports: Record<string, { types: string; default: string } | string>;
  files: string[];
}

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as PackageJson;
/** tsc emits src/x.ts as dist/src/x.js (rootDir ".", outDir "dist"). */
const emitted = (source: string) => `./${source.replace(/^src\//, 'dist/src/').replace(/\.ts$/, '.js')}`;

describe('package.json exports', () => {
  for (const subpath of ['./client', '.']) {
    it(`maps '${subpath}' to the built client and its declarations`, () => {
      const entry = pkg.exports[subpath];
      assert.ok(typeof entry === 'object');
      assert.equal(entry.default, emitted('src/client/index.ts'));
      assert.equal(entry.types, emitted('src/client/index.ts').replace(/\.js$/, '.d.ts'));
      assert.ok(existsSync(new URL('../../packages/client/src/index.ts', import.meta.url)));
    });
  }

  it('points the plantstore bin and npm start at the bundled CLI, inside the published files', () => {
    assert.equal(pkg.bin.plantstore, SERVICE_ENTRY);
    assert.match(pkg.scripts.start ?? '', new RegExp(`^node (--\\S+ )*${SERVICE_ENTRY.replaceAll('.', '\\.')} serve$`));
    assert.match(pkg.scripts.build ?? '', /scripts\/bundle-service\.ts/);
    assert.ok(pkg.files.some((f) => pkg.bin.plantstore?.startsWith(`${f}/`)));
  });
});
