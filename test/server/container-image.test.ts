/**
 * The container image's recipe (Containerfile, .dockerignore), read as rules: no container engine
 * can pull a base image where the suite runs, so what the image would hold and how it would run
 * is checked here, and the build context is filtered by a .dockerignore implementation that follows
 * Docker's rules (@balena/dockerignore).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import type { Ignore } from '@balena/dockerignore';

// A CommonJS module whose declarations describe an ES default export: required, it is that function.
const dockerignore = createRequire(import.meta.url)('@balena/dockerignore') as () => Ignore;

const ROOT = new URL('../../', import.meta.url);
const containerfile = readFileSync(new URL('Containerfile', ROOT), 'utf8');
/** Instructions, continuation lines joined, comments left out. */
const instructions = containerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .filter((line) => line.trim() !== '' && !line.startsWith('#'));
const stages = instructions
  .join('\n')
  .split(/^(?=FROM )/m)
  .filter((stage) => stage.startsWith('FROM '));
const runtime = stages.at(-1) ?? '';
const context = dockerignore().add(readFileSync(new URL('.dockerignore', ROOT), 'utf8'));

/** Every file git knows or would track here, as a build context would hold them (plus what a host leaves behind). */
function contextFiles(): string[] {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return listed.split('\n').filter((path) => path !== '');
}

describe('Containerfile', () => {
  it('builds in a stage of its own and runs from a second one that copies only the installed package', () => {
    assert.equal(stages.length, 2);
    assert.match(stages[0] ?? '', /npm ci/);
    assert.match(stages[0] ?? '', /npm pack/);
    assert.match(stages[0] ?? '', /npm install --omit=dev [^\n]*plantstore-\*\.tgz/);
    const copies = runtime.split('\n').filter((line) => line.startsWith('COPY'));
    assert.deepEqual(copies, ['COPY --from=build /srv/plantstore /srv/plantstore']);
    assert.doesNotMatch(runtime, /npm (ci|install)|build-essential|g\+\+/);
  });

  it('runs as an unprivileged user that can write only its data volume', () => {
    const user = /^USER (\S+)$/m.exec(runtime)?.[1] ?? '';
    assert.ok(user !== '' && !/^(root|0)(:|$)/.test(user), `USER ${user}`);
    assert.match(runtime, /^VOLUME \["\/data"\]$/m);
    assert.match(runtime, /DATABASE_URL=sqlite:\/data\/[\w.-]+\.db/);
    assert.match(runtime, /chown plantstore:plantstore \/data/);
    const lastUser = runtime.lastIndexOf('\nUSER ');
    assert.ok(runtime.indexOf('\nENTRYPOINT ') > lastUser, 'ENTRYPOINT comes after USER');
  });

  it('checks health on /readyz, stops on SIGTERM and serves on all interfaces of the container', () => {
    assert.match(runtime, /^HEALTHCHECK [^\n]*CMD [^\n]*\/readyz/m);
    assert.match(runtime, /^STOPSIGNAL SIGTERM$/m);
    assert.match(runtime, /HOST=0\.0\.0\.0/);
    assert.match(runtime, /^ENTRYPOINT \["node", [^\n]*"node_modules\/plantstore\/dist\/service\/plantstore\.js"\]$/m);
    assert.match(runtime, /^CMD \["serve"\]$/m);
  });

  it('names no secret: no token, password or key in ENV, ARG or the database URL', () => {
    assert.doesNotMatch(containerfile, /pst_|PASSWORD|SECRET|TOKEN=|postgres:\/\/[^@\s]*:[^@\s]*@/i);
  });
});

describe('.dockerignore', () => {
  it("keeps the host's installs, builds, data, secrets and history out of the build context", () => {
    const leftBehind = [
      'node_modules/fastify/package.json',
      'packages/client/node_modules/x/index.js',
      'dist/service/plantstore.js',
      'packages/client/dist/index.js',
      'data/plantstore.db',
      'data/plantstore.db-wal',
      'backups/plantstore-2026-11-25.db',
      '.env',
      '.env.production',
      'deploy/.env',
      'certs/server.key',
      'certs/server.pem',
      'plantstore-1.0.0.tgz',
      '.git/config',
      'test-output/cli-1/plantstore.js',
    ];
    assert.deepEqual(leftBehind.filter(context.createFilter()), []);
  });

  it('lets in everything the build uses: sources, lockfile, scripts, docs and the published files', () => {
    const files = contextFiles();
    const needed = files.filter((path) => /^(src|packages\/client\/src|scripts|docs)\//.test(path));
    needed.push('package.json', 'package-lock.json', 'packages/client/package.json', 'tsconfig.json');
    needed.push('README.md', 'LICENSE', 'CHANGELOG.md');
    assert.ok(needed.length > 50);
    assert.deepEqual(
      needed.filter((path) => context.ignores(path)),
      [],
    );
  });
});

describe('the published file list (npm pack --dry-run)', () => {
  it('holds no data, secrets, sources or tests', () => {
    const output = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    const [listing] = JSON.parse(output) as { files: { path: string }[] }[];
    const files = (listing?.files ?? []).map((file) => file.path);
    assert.ok(files.includes('package.json'));
    assert.deepEqual(
      files.filter((path) => /(^|\/)\.env|\.db(-wal|-shm)?$|\.pem$|\.key$|^(src|test|bench|scripts|data)\//.test(path)),
      [],
    );
  });
});
