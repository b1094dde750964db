/**
 * Both packages (the service, packages/client) as `npm publish` reads them. npm checks a package's bin before its
 * prepack builds dist/, so a bin inside dist/ made `npm publish` from a clean clone warn "No bin file found"; the
 * command is a file of the repository that loads the bundle.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Manifest {
  readonly name: string;
  readonly license?: string;
  readonly bin?: Record<string, string>;
  readonly files?: readonly string[];
}

/** The repository's files: those git has or would add (dist/, built, is ignored). */
const committed = new Set(
  execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  }).split('\n'),
);

for (const folder of ['', 'packages/client/'])
  describe(`the package in ./${folder}`, () => {
    const manifest = JSON.parse(readFileSync(`${ROOT}/${folder}package.json`, 'utf8')) as Manifest;

    it('has every bin as a file of the repository, in the package, so no build is needed for npm to find it', () => {
      for (const [command, path] of Object.entries(manifest.bin ?? {})) {
        assert.ok(committed.has(`${folder}${path}`), `${command}: ${path} is not a file of the repository`);
        const top = path.split('/')[0]!;
        assert.ok(manifest.files?.includes(top) === true, `${command}: ${top} is not in "files"`);
      }
    });

    it('is MIT licensed, with the licence file committed beside it', () => {
      assert.equal(manifest.license, 'MIT');
      assert.ok(committed.has(`${folder}LICENSE`));
    });
  });
