/**
 * The service as a user installs it: `npm pack` (its prepack builds the bundle), the tarball installed
 * into an empty folder without dev dependencies, then `npx plantstore serve` on each store, on the Node.js
 * running the tests (CI runs this file on 22 and on 24). Slow: the install builds better-sqlite3's addon.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { testBackends } from '../support/backends.js';
import { packAndInstall, type InstalledPackage } from '../support/packed.js';
import { checkedFetch } from '../support/checked-fetch.js';

let service: InstalledPackage;

before(async () => {
  service = await packAndInstall();
});
after(() => service?.remove());

describe('the service tarball', () => {
  it('holds the bundle, its migrations, the console, README, LICENSE, CHANGELOG and docs; no sources, tests, data or secrets', () => {
    const files = service.packedFiles;
    const expected = [
      'bin/plantstore.js',
      'dist/service/plantstore.js',
      'dist/console/index.html',
      'README.md',
      'LICENSE',
      'CHANGELOG.md',
    ];
    for (const file of [...expected, 'package.json']) assert.ok(files.includes(file), `${file} is not in the tarball`);
    assert.ok(files.some((file) => /^dist\/service\/migrations\/.+\.sql$/.test(file)));
    const unexpected = files.filter(
      (file) =>
        !/^dist\/(service|console)\//.test(file) &&
        !/^docs\/[^/]+\.md$/.test(file) &&
        !['bin/plantstore.js', 'README.md', 'LICENSE', 'CHANGELOG.md', 'package.json'].includes(file),
    );
    assert.deepEqual(unexpected, []);
    assert.deepEqual(
      files.filter((file) => /(^|\/)\.env|\.db(-wal|-shm)?$|\.pem$|\.key$|node_modules\//.test(file)),
      [],
    );
  });

  it('installs no dev dependency', () => {
    const installed = service.installedPackages();
    for (const dev of ['typescript', 'esbuild', 'tsx', 'eslint', 'prettier', 'node'])
      assert.ok(!installed.includes(`node_modules/${dev}`), `${dev} was installed`);
    assert.ok(installed.includes('node_modules/plantstore'));
  });
});

for (const backend of testBackends())
  describe(`npx plantstore serve from the installed tarball [${backend.name}]`, () => {
    it('starts, prints a first token, is ready, creates and reads an int64 id, and stops on SIGTERM', async () => {
      const opened = await backend.open();
      const child = spawn('npx', ['--no-install', 'plantstore', 'serve'], {
        cwd: service.dir,
        env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATABASE_URL: opened.databaseUrl },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true, // npx and the service: signalled as one group
      });
      let output = '';
      child.stdout.on('data', (chunk) => (output += String(chunk)));
      child.stderr.on('data', (chunk) => (output += String(chunk)));
      // 'close', not 'exit': npx may exit on the signal before the service it started has finished stopping, and
      // the pipes close only once every process holding them (the service too) has exited.
      const closed = once(child, 'close');
      try {
        let url: string | undefined;
        let token: string | undefined;
        while (url === undefined || token === undefined) {
          assert.equal(child.exitCode, null, `npx plantstore serve exited:\n${output}`);
          url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
          token = /^ {4}(pst_[A-Za-z0-9_-]{43})$/m.exec(output)?.[1];
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        assert.equal((await checkedFetch(`${url}/readyz`)).status, 200);
        // The console ships prebuilt in the tarball (not /console's 503 CONSOLE_NOT_BUILT).
        const consolePage = await fetch(`${url}/console`);
        assert.equal(consolePage.status, 200);
        assert.match(consolePage.headers.get('content-type') ?? '', /^text\/html/);
        const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
        const body = '{"id": 9007199254740993, "name": "Monstera"}';
        const created = await checkedFetch(`${url}/plants`, { method: 'POST', headers, body });
        assert.equal(`${created.status} ${await created.text()}`, '200 {"name":"Monstera"}');
        const read = await checkedFetch(`${url}/plants/9007199254740993`, { headers });
        assert.equal(`${read.status} ${await read.text()}`, '200 {"id":9007199254740993,"name":"Monstera"}');
        process.kill(-(child.pid as number), 'SIGTERM');
        await closed;
        assert.match(output, /"msg":"stopped"/);
      } finally {
        if (child.exitCode === null && child.signalCode === null) process.kill(-(child.pid as number), 'SIGKILL');
        await opened.cleanup();
      }
    });
  });
