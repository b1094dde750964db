/**
 * The docs never tell anyone to install a package name that is not published. `plantstore` and
 * `@plantstore/client` are not on the npm registry (yet): `npm install @plantstore/client` fails today, and would
 * install whatever someone else publishes under that name tomorrow; so would `npx plantstore` run outside a folder
 * where the package is installed. The docs install those two from a tarball (`npm pack`) or a path.
 *
 * Published means: the lockfile holds the name as a package fetched by its integrity hash (npm ci downloads it from
 * the registry), not as a link to a folder of this repository.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

const ROOT = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, ROOT), 'utf8');

const DOCS = [
  'README.md',
  'CHANGELOG.md',
  'bench/README.md',
  'packages/client/README.md',
  ...readdirSync(new URL('docs/', ROOT))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** Names the lockfile fetches from the registry. */
function publishedNames(): Set<string> {
  const lock = JSON.parse(read('package-lock.json')) as {
    packages: Record<string, { integrity?: string; link?: boolean }>;
  };
  const names = Object.entries(lock.packages)
    .filter(([path, entry]) => path.includes('node_modules/') && entry.integrity !== undefined && entry.link !== true)
    .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
  return new Set(names);
}

/** The commands in a document's code: inline code spans (which may wrap) and the lines of fenced blocks. */
function codeOf(text: string): string[] {
  const fenced = [...text.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].flatMap(([, block]) => block!.split('\n'));
  const prose = text.replace(/^```[^\n]*\n[\s\S]*?^```/gm, '');
  const inline = [...prose.matchAll(/`([^`]+)`/g)].map(([, code]) => code!.replace(/\s+/g, ' '));
  return [...fenced, ...inline].flatMap((code) => code.replace(/\s#.*$/, '').split(/&&|\|\||;|\|/));
}

/** The package specs a command would fetch: `npm install|i|add <spec>...`, `npx <spec>`, `npx -p <spec>`. */
function fetchedSpecs(command: string): string[] {
  const words = command.trim().split(/\s+/);
  while (words.length > 0 && /^[A-Z_]+=/.test(words[0]!)) words.shift();
  const [tool, sub, ...rest] = words;
  if (tool === 'npm' && sub !== undefined && ['install', 'i', 'add'].includes(sub))
    return rest.filter((word) => !word.startsWith('-'));
  const npxArgs =
    tool === 'npx'
      ? [...(sub === undefined ? [] : [sub]), ...rest]
      : tool === 'npm' && sub === 'exec'
        ? rest
        : undefined;
  if (npxArgs === undefined) return [];
  // --no (and the older --no-install): npx runs only what is installed, never fetching a name.
  if (npxArgs.some((word) => word === '--no' || word === '--no-install')) return [];
  const packages = npxArgs.flatMap((word, i) =>
    ['-p', '--package'].includes(npxArgs[i - 1] ?? '') ? [word] : word.startsWith('--package=') ? [word.slice(10)] : [],
  );
  if (packages.length > 0) return packages;
  const command_ = npxArgs.find(
    (word, i) => !word.startsWith('-') && !['-p', '--package'].includes(npxArgs[i - 1] ?? ''),
  );
  return command_ === undefined || command_ === '--' ? [] : [command_];
}

/** A tarball, a folder or a placeholder path, not a registry name. */
const isLocal = (spec: string) => /^(\.{0,2}\/|~\/)|\.tgz$|^<|^\$/.test(spec);
/** The name in `name`, `name@range`, `@scope/name@range`. */
const nameOf = (spec: string) =>
  spec
    .split('@')
    .slice(0, spec.startsWith('@') ? 2 : 1)
    .join('@');

describe('install commands in the docs', () => {
  const published = publishedNames();

  it('reads the commands the way a shell would (a check of the reader itself)', () => {
    assert.deepEqual(fetchedSpecs('npm install @plantstore/client'), ['@plantstore/client']);
    assert.deepEqual(fetchedSpecs('npm install --no-save node@22 '), ['node@22']);
    assert.deepEqual(fetchedSpecs('npx plantstore serve'), ['plantstore']);
    assert.deepEqual(fetchedSpecs('npx --yes -p node@24 -- node dist/service/plantstore.js serve'), ['node@24']);
    assert.deepEqual(fetchedSpecs('npx --no -- plantstore serve'), []);
    assert.deepEqual(fetchedSpecs('PORT=1 npx pino-pretty'), ['pino-pretty']);
    assert.ok(published.has('node') && published.has('pino-pretty'));
    assert.ok(!published.has('plantstore') && !published.has('@plantstore/client'));
  });

  it('name only published packages, tarballs or paths', () => {
    const wrong: string[] = [];
    for (const doc of DOCS)
      for (const command of codeOf(read(doc)))
        for (const spec of fetchedSpecs(command))
          if (!isLocal(spec) && !published.has(nameOf(spec))) wrong.push(`${doc}: ${command.trim()}`);
    assert.deepEqual(wrong, []);
  });
});
