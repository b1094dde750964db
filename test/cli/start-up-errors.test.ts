/**
 * `plantstore serve` refusing to start, as a real process: one line on stderr that
 * names the variable at fault and, for the SQLite store, the path.
 */
import assert from 'node:assert/strict';
import { chmodSync, chownSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli, type CliProcessOptions } from '../support/service-process.js';
import { tempDir } from '../support/temp.js';

const BASE_ENV = {
  PORT: '0',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'warn',
  METRICS_PORT: '',
  METRICS_HOST: '',
  TRUST_PROXY: '',
};

async function refusal(env: Record<string, string>, options: CliProcessOptions = {}): Promise<string> {
  const run = await runCli(['serve'], { ...BASE_ENV, ...env }, {}, { timeout: 20_000, ...options });
  assert.equal(run.code, 2, `exit code 2 expected; stderr: ${run.stderr}`);
  assert.equal(run.stdout, '');
  assert.match(run.stderr, /^plantstore: [^\n]+\n$/, 'one line');
  return run.stderr.slice('plantstore: '.length, -1);
}

async function busyPort(): Promise<{ port: number; close(): void }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert.ok(address !== null && typeof address === 'object');
  return { port: address.port, close: () => server.close() };
}

const isRoot = process.getuid?.() === 0;
const NOBODY = 65534;

describe('plantstore serve names what is wrong', () => {
  let dir: string;
  before(() => {
    dir = tempDir();
    chmodSync(dir, 0o755);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a bad TRUST_PROXY, HOST or METRICS_PORT, or a DATABASE_URL port out of range', async () => {
    const sqlite = `sqlite:${join(dir, 'config', 'plantstore.db')}`;
    assert.match(await refusal({ DATABASE_URL: sqlite, TRUST_PROXY: 'abc' }), /^TRUST_PROXY must be .* \(got 'abc'\)$/);
    assert.match(
      await refusal({ DATABASE_URL: sqlite, HOST: '999.1.1.1' }),
      /^HOST must be an IP address .* \(got '999\.1\.1\.1'\)$/,
    );
    assert.match(
      await refusal({ DATABASE_URL: sqlite, PORT: '9111', METRICS_PORT: '9111' }),
      /^METRICS_PORT \(9111\) must differ from PORT \(9111\)/,
    );
    const port = await refusal({ DATABASE_URL: 'postgres://app:s3cret@127.0.0.1:99999/test' });
    assert.match(
      port,
      /^DATABASE_URL: port 99999 is out of range \(1 to 65535\) \(got 'postgres:\/\/app:\*\*\*@127\.0\.0\.1:99999\/test'\)$/,
    );
    assert.match(
      await refusal({ DATABASE_URL: 'postgres://app:s3cret@[::1/test' }),
      /^DATABASE_URL is not a valid postgres:\/\/ URL .*'postgres:\/\/app:\*\*\*@\[::1\/test'/,
    );
  });

  it('a PORT or METRICS_PORT already in use, a HOST that does not resolve', async () => {
    const sqlite = `sqlite:${join(dir, 'listen', 'plantstore.db')}`;
    const busy = await busyPort();
    try {
      assert.match(
        await refusal({ DATABASE_URL: sqlite, PORT: String(busy.port) }),
        new RegExp(`^PORT: 127\\.0\\.0\\.1:${busy.port} is already in use`),
      );
      assert.match(
        await refusal({ DATABASE_URL: sqlite, METRICS_PORT: String(busy.port) }),
        new RegExp(`^METRICS_PORT: 127\\.0\\.0\\.1:${busy.port} is already in use`),
      );
    } finally {
      busy.close();
    }
    assert.match(
      await refusal({ DATABASE_URL: sqlite, HOST: 'plantstore-test.invalid' }),
      /^HOST: cannot resolve the host name 'plantstore-test\.invalid'/,
    );
  });

  it('a SQLite path whose folder cannot be created, or that is a folder', async () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, '');
    const under = await refusal({ DATABASE_URL: `sqlite:${join(file, 'data', 'plantstore.db')}` });
    assert.match(
      under,
      new RegExp(
        `^DATABASE_URL: cannot create the folder ${join(file, 'data')} that holds the SQLite store ${join(file, 'data', 'plantstore.db')}: `,
      ),
    );
    const folder = join(dir, 'a-folder');
    mkdirSync(folder);
    assert.match(
      await refusal({ DATABASE_URL: `sqlite:${folder}` }),
      new RegExp(`^DATABASE_URL: ${folder} is a folder, not a SQLite file`),
    );
  });

  describe('a folder the service may not write', () => {
    // Root writes anywhere, so as root the service runs as nobody; otherwise the folder is made read-only.
    const as: CliProcessOptions = isRoot ? { uid: NOBODY, gid: NOBODY } : {};
    let locked: string;
    let skip: string | false = false;
    before(async () => {
      locked = join(dir, 'locked');
      mkdirSync(locked);
      // A store made beforehand, writable by the service, in the folder it cannot write.
      const made = await runCli(['migrate'], { DATABASE_URL: `sqlite:${join(locked, 'existing.db')}` });
      assert.equal(made.code, 0, made.stderr);
      rmSync(join(locked, 'existing.db-wal'), { force: true });
      rmSync(join(locked, 'existing.db-shm'), { force: true });
      if (isRoot) {
        chownSync(join(locked, 'existing.db'), NOBODY, NOBODY);
        // A checkout under a folder only root may enter (mktemp -d makes them 0700) cannot
        // even be started by nobody: the spawn itself fails with EACCES.
        const probe = await runCli(['--help'], {}, {}, as).catch((error: Error) => ({
          code: -1,
          stdout: '',
          stderr: error.message,
        }));
        if (probe.code !== 0) {
          skip = `running as root, and user nobody cannot run the CLI from this checkout: ${probe.stderr.split('\n')[0]}`;
          process.stderr.write(`\n!!! start-up error test skipped: ${skip}\n\n`);
        }
      } else {
        chmodSync(locked, 0o555);
      }
    });
    after(() => chmodSync(locked, 0o755));

    it('refuses a new store there, and an existing writable one (SQLite needs its -wal and -shm files beside it)', async (t) => {
      if (skip !== false) return t.skip(skip);
      for (const name of ['new.db', 'existing.db']) {
        const path = join(locked, name);
        const message = await refusal({ DATABASE_URL: `sqlite:${path}` }, as);
        assert.ok(
          message.startsWith(
            `DATABASE_URL: cannot write the folder ${locked} that holds the SQLite store ${path} (SQLite creates its -wal and -shm files there): `,
          ),
          message,
        );
      }
    });

    it('refuses a store file it may not write, in a folder it may', async (t) => {
      if (skip !== false) return t.skip(skip);
      const open = join(dir, 'open');
      mkdirSync(open);
      const path = join(open, 'read-only.db');
      writeFileSync(path, '');
      chmodSync(path, 0o444);
      // As root the file stays root's, and nobody gets the folder.
      if (isRoot) chownSync(open, NOBODY, NOBODY);
      assert.match(
        await refusal({ DATABASE_URL: `sqlite:${path}` }, as),
        new RegExp(`^DATABASE_URL: cannot write the SQLite store ${path}: `),
      );
    });
  });
});
