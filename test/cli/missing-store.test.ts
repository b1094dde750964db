/**
 * The management commands refuse a SQLite path where no store exists, rather than
 * create an empty one that no service uses (a typo, or the default relative path
 * run from another folder): `token create` would print a token nothing accepts.
 * `migrate` and `serve` create it.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runCli } from '../support/service-process.js';

// Inside the checkout: run from source, the SQLite writer thread loads tsx from the current folder's node_modules.
const OUTPUT = fileURLToPath(new URL('../../test-output/', import.meta.url));

const COMMANDS = [
  ['token', 'create', '--name', 'ci'],
  ['token', 'list'],
  ['token', 'revoke', 'ci'],
  ['webhook', 'add', 'https://93.184.216.34/hook'],
  ['webhook', 'list'],
  ['webhook', 'rotate-secret', 'whk_0123456789abcdef01234567'],
  ['webhook', 'remove', 'whk_0123456789abcdef01234567'],
];

describe('a SQLite store that does not exist', () => {
  let cwd: string;
  before(() => {
    mkdirSync(OUTPUT, { recursive: true });
    cwd = mkdtempSync(join(OUTPUT, 'missing-store-'));
  });
  after(() => rmSync(cwd, { recursive: true, force: true }));

  it('is refused by token and webhook commands, naming the absolute path and how to create it; nothing is created', async () => {
    const expected = join(cwd, 'data', 'plantstore.db');
    for (const args of COMMANDS) {
      // The default DATABASE_URL, sqlite:./data/plantstore.db, is relative to the current folder.
      const run = await runCli(args, { DATABASE_URL: '' }, {}, { cwd, timeout: 20_000 });
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.equal(run.stdout, '');
      assert.equal(
        run.stderr,
        `plantstore: DATABASE_URL: no SQLite store at ${expected}; create it with plantstore migrate (or a first plantstore serve), or fix the path (a relative one starts from the current folder)\n`,
        args.join(' '),
      );
    }
    const typo = await runCli(
      ['token', 'list', '--database-url', 'sqlite:dta/plantstore.db'],
      {},
      {},
      { cwd, timeout: 20_000 },
    );
    assert.equal(typo.code, 2);
    assert.match(typo.stderr, new RegExp(`no SQLite store at ${join(cwd, 'dta', 'plantstore.db')};`));
    assert.deepEqual(readdirSync(cwd), [], 'no folder or file was created');
  });

  it('is created by migrate, after which the commands work on it', async () => {
    const migrated = await runCli(['migrate'], { DATABASE_URL: '' }, {}, { cwd, timeout: 20_000 });
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.ok(existsSync(join(cwd, 'data', 'plantstore.db')));
    const created = await runCli(
      ['token', 'create', '--name', 'ci'],
      { DATABASE_URL: '' },
      {},
      { cwd, timeout: 20_000 },
    );
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /^pst_/m);
  });

  it('is explained in --help', async () => {
    for (const command of ['token', 'webhook']) {
      const help = await runCli([command, '--help'], {}, {}, { cwd, timeout: 20_000 });
      assert.match(
        help.stdout,
        /The SQLite store must exist: plantstore migrate \(or a first plantstore serve\) creates it\./,
        command,
      );
    }
  });
});
