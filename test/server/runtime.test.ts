/**
 * The service on the runtime running this suite (CI runs it on Node 22 and Node 24).
 * better-sqlite3 12 wrapped its objects in Node's raw ObjectWrap, whose destructor
 * aborts the whole process on Node 24.19+ when V8 collects a Statement outside a JS
 * context: the service died with SIGABRT at start or at SIGTERM. V8's --gc-interval
 * makes collections happen every few thousand allocations, on the main thread and in
 * the SQLite writer's worker alike, so a driver that leaves that to chance aborts here.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { installationOf, MINIMUM_NODE_MAJOR, unsupportedRuntime } from '../../src/cli/supported-runtime.js';
import { issueToken } from '../../src/tokens/token-service.js';
import { sqliteBackend } from '../support/backends.js';
import { bundledCli } from '../support/bundled-cli.js';
import { fromSource, runCli, startServiceProcess } from '../support/service-process.js';
import { tempDir } from '../support/temp.js';
import { checkedFetch } from '../support/checked-fetch.js';

const SUPPORTED_MAJORS = [22, 24];

describe(`the service on Node ${process.versions.node}`, () => {
  it('runs on a supported Node.js line', () => {
    const major = Number(process.versions.node.split('.')[0]);
    assert.ok(
      SUPPORTED_MAJORS.includes(major),
      `Node ${process.versions.node} is not one of the supported lines (${SUPPORTED_MAJORS.join(', ')})`,
    );
  });

  it('serves creates through the writer thread with V8 collecting constantly, and exits 0 on SIGTERM', async () => {
    const opened = await sqliteBackend.open();
    try {
      const { secret } = await issueToken(opened.store.tokens, { name: 'gc', scopes: ['plants:read', 'plants:write'] });
      const service = await startServiceProcess(
        { DATABASE_URL: opened.databaseUrl },
        fromSource('--gc-interval=2000'),
        60_000,
      );
      const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
      // Concurrent creates so that the writer thread commits them in batches.
      const statuses = await Promise.all(
        Array.from({ length: 200 }, async (_, i) => {
          const response = await checkedFetch(`${service.url}/plants`, {
            method: 'POST',
            headers,
            body: `{"id": ${i}, "name": "p${i}"}`,
          });
          await response.arrayBuffer();
          return response.status;
        }),
      );
      assert.deepEqual(new Set(statuses), new Set([200]));
      const read = await checkedFetch(`${service.url}/plants/199`, { headers });
      assert.equal(await read.text(), '{"id":199,"name":"p199"}');

      assert.equal(await service.stop('SIGTERM'), 0, service.output());
      assert.doesNotMatch(service.output(), /Assertion failed|Native stack trace/);
    } finally {
      await opened.cleanup();
    }
  });
});

// Debian's own Node.js (20 on the machines CI runs on), if there is one: older than the
// driver supports, so the CLI must refuse it with a message instead of a segfault.
const SYSTEM_NODE = '/usr/bin/node';
function systemNodeVersion(): string | undefined {
  try {
    return execFileSync(SYSTEM_NODE, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}
const systemNode = systemNodeVersion();

describe('on an unsupported Node.js', () => {
  const checkout = { installation: 'checkout', entry: '/repo/dist/service/plantstore.js', args: ['serve'] } as const;
  const installed = {
    installation: 'package',
    entry: '/srv/plantstore/node_modules/plantstore/dist/service/plantstore.js',
    args: ['token', 'create', '--name', "o'brien app"],
  } as const;

  it('names the runtime and the supported lines; 22 and 24 are let through', () => {
    for (const context of [checkout, installed]) {
      assert.match(
        unsupportedRuntime('20.20.2', context) ?? '',
        /^Node\.js 20\.20\.2 is not supported: run Plant Store on Node\.js 22 or 24\b/,
      );
      assert.equal(unsupportedRuntime('22.12.0', context), undefined);
      assert.equal(unsupportedRuntime('24.21.0', context), undefined);
    }
  });

  it('in a checkout, points at the Node.js 24 that npm ci installs', () => {
    const message = unsupportedRuntime('20.20.2', checkout) ?? '';
    assert.match(message, /in this repository, `npm start` and `npm test` use the Node\.js 24 that `npm ci` installs/);
    assert.match(message, /`node_modules\/\.bin\/node dist\/service\/plantstore\.js`/);
  });

  it('in an installed package, says how to get Node.js 22 or 24, and never mentions a repository', () => {
    const message = unsupportedRuntime('20.20.2', installed) ?? '';
    assert.doesNotMatch(message, /repository|npm ci/);
    assert.match(message, /https:\/\/nodejs\.org\/en\/download/);
    assert.match(message, /nvm install 24/);
    assert.ok(
      message.endsWith(
        "npx --yes -p node@24 -- node /srv/plantstore/node_modules/plantstore/dist/service/plantstore.js token create --name 'o'\\''brien app'",
      ),
      message,
    );
  });

  it('tells a checkout (sources, not under node_modules) from an installed package (under node_modules)', () => {
    const dir = tempDir('plantstore-installation-');
    try {
      const layout = (root: string, withSources: boolean) => {
        mkdirSync(join(root, 'dist', 'service'), { recursive: true });
        writeFileSync(join(root, 'package.json'), '{"name":"plantstore","version":"1.0.0"}');
        writeFileSync(join(root, 'dist', 'service', 'plantstore.js'), '');
        if (withSources) {
          mkdirSync(join(root, 'src', 'cli'), { recursive: true });
          writeFileSync(join(root, 'src', 'cli', 'main.ts'), '');
        }
        return join(root, 'dist', 'service', 'plantstore.js');
      };
      assert.equal(installationOf(layout(join(dir, 'clone'), true)), 'checkout');
      assert.equal(installationOf(layout(join(dir, 'app', 'node_modules', 'plantstore'), false)), 'package');
      // npx's cache is a node_modules too; sources there would still not make it a checkout.
      assert.equal(installationOf(layout(join(dir, 'npx', 'node_modules', 'plantstore'), true)), 'package');
      // A tarball unpacked by hand: no sources.
      assert.equal(installationOf(layout(join(dir, 'unpacked', 'package'), false)), 'package');
      // `npm install <checkout folder>` links to the checkout.
      mkdirSync(join(dir, 'linked', 'node_modules'), { recursive: true });
      symlinkSync(join(dir, 'clone'), join(dir, 'linked', 'node_modules', 'plantstore'));
      assert.equal(
        installationOf(join(dir, 'linked', 'node_modules', 'plantstore', 'dist/service/plantstore.js')),
        'checkout',
      );
      assert.equal(installationOf(fileURLToPath(import.meta.url)), 'checkout', 'this repository');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  const unsupported = systemNode !== undefined && Number(systemNode.split('.')[0]) < MINIMUM_NODE_MAJOR;
  const skip = !unsupported && `${SYSTEM_NODE} is absent or supported`;
  it(
    `plantstore refuses to start on ${SYSTEM_NODE} ${systemNode ?? '(absent)'} in this repository, exit code 2`,
    { skip },
    async () => {
      const opened = await sqliteBackend.open();
      try {
        const entry = await bundledCli();
        const run = await runCli(['token', 'list'], { DATABASE_URL: opened.databaseUrl }, { executable: SYSTEM_NODE });
        assert.equal(run.code, 2, run.stderr);
        const message = unsupportedRuntime(systemNode!, { installation: 'checkout', entry, args: ['token', 'list'] });
        assert.equal(run.stderr, `plantstore: ${message}\n`);
      } finally {
        await opened.cleanup();
      }
    },
  );

  it(
    `plantstore refuses to start on ${SYSTEM_NODE} ${systemNode ?? '(absent)'} as an installed package, exit code 2`,
    { skip },
    async () => {
      // The bundle as npm installs it, under a node_modules (inside the repository's test-output/, so that the
      // modules the bundle leaves out are still found, as an install would provide them).
      const app = mkdtempSync(join(fileURLToPath(new URL('../../test-output/', import.meta.url)), 'installed-'));
      try {
        const root = join(app, 'node_modules', 'plantstore');
        cpSync(dirname(await bundledCli()), join(root, 'dist', 'service'), { recursive: true });
        writeFileSync(join(root, 'package.json'), '{"name":"plantstore","version":"1.0.0","type":"module"}');
        const entry = join(root, 'dist', 'service', 'plantstore.js');
        const run = await runCli(['token', 'list'], {}, { nodeArgs: [entry], executable: SYSTEM_NODE });
        assert.equal(run.code, 2, run.stderr);
        const message = unsupportedRuntime(systemNode!, { installation: 'package', entry, args: ['token', 'list'] });
        assert.equal(run.stderr, `plantstore: ${message}\n`);
        assert.doesNotMatch(run.stderr, /repository/);
      } finally {
        rmSync(app, { recursive: true, force: true });
      }
    },
  );
});
