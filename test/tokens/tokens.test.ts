import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { runCli } from '../support/service-process.js';
import { sqliteBackend } from '../support/backends.js';
import { createHarness } from '../support/harness.js';

const TOKEN_LINE = /^pst_[A-Za-z0-9_-]{43}$/;

describe('tokens at rest', () => {
  // Reads the SQLite file byte by byte: the point is what is on disk. (The
  // PostgreSQL suite checks its tokens table the same way through SQL.)
  it('are stored only as SHA-256 hashes: no secret appears anywhere in the database files [sqlite]', async () => {
    const h = await createHarness({ backend: sqliteBackend });
    try {
      const path = h.databaseUrl.slice('sqlite:'.length);
      const db = new Database(path, { readonly: true });
      const rows = db.prepare('SELECT name, secret_hash FROM tokens').all() as { name: string; secret_hash: string }[];
      db.close();
      const secrets = Object.values(h.tokens);
      for (const secret of secrets) {
        const hash = createHash('sha256').update(secret).digest('hex');
        assert.ok(
          rows.some((row) => row.secret_hash === hash),
          'each token is found by its hash',
        );
      }
      const files = readdirSync(dirname(path)).map((f) => readFileSync(join(dirname(path), f)).toString('latin1'));
      for (const secret of secrets) {
        assert.ok(
          files.every((bytes) => !bytes.includes(secret) && !bytes.includes(secret.slice(4))),
          'a secret is on disk',
        );
      }
    } finally {
      await h.close();
    }
  });
});

describe('plantstore token (CLI)', () => {
  it('create prints the secret alone on the last line; list never shows it; revoke refuses it afterwards', async () => {
    const opened = await sqliteBackend.open();
    await opened.store.close();
    const env = { DATABASE_URL: opened.databaseUrl };
    try {
      const created = await runCli(
        ['token', 'create', '--name', 'ci-bot', '--scopes', 'plants:read', '--expires-in', '30d'],
        env,
      );
      assert.equal(created.code, 0, created.stderr);
      const lines = created.stdout.trimEnd().split('\n');
      const secret = lines[lines.length - 1] ?? '';
      assert.match(secret, TOKEN_LINE);

      const listed = await runCli(['token', 'list', '--json'], env);
      assert.equal(listed.code, 0, listed.stderr);
      assert.ok(!listed.stdout.includes(secret));
      const [token] = JSON.parse(listed.stdout) as {
        name: string;
        scopes: string[];
        status: string;
        expiresAt: string;
      }[];
      assert.equal(token?.name, 'ci-bot');
      assert.deepEqual(token?.scopes, ['plants:read']);
      assert.equal(token?.status, 'active');
      const days = (Date.parse(token?.expiresAt ?? '') - Date.now()) / 86_400_000;
      assert.ok(days > 29.9 && days <= 30, `expires in ${days} days`);

      const table = await runCli(['token', 'list'], env);
      assert.match(table.stdout, /ci-bot\s+plants:read\s+active/);

      const revoked = await runCli(['token', 'revoke', 'ci-bot'], env);
      assert.equal(revoked.code, 0, revoked.stderr);
      assert.match((await runCli(['token', 'list'], env)).stdout, /ci-bot\s+plants:read\s+revoked/);
    } finally {
      await opened.cleanup();
    }
  });

  it('explains bad input in one line with a non-zero exit code', async () => {
    const opened = await sqliteBackend.open();
    await opened.store.close();
    const env = { DATABASE_URL: opened.databaseUrl };
    try {
      const cases: [string[], RegExp][] = [
        [['token', 'create', '--name', 'x', '--scopes', 'plants:fly'], /unknown scope 'plants:fly'/],
        [['token', 'create', '--name', 'x', '--expires-in', 'soon'], /invalid duration 'soon'/],
        [['token', 'create', '--name', 'bad name'], /invalid token name/],
        [['token', 'revoke', 'nobody'], /no token has id or name 'nobody'/],
      ];
      for (const [args, message] of cases) {
        const result = await runCli(args, env);
        assert.notEqual(result.code, 0, args.join(' '));
        assert.match(result.stderr, message);
      }
      await runCli(['token', 'create', '--name', 'twice'], env);
      const duplicate = await runCli(['token', 'create', '--name', 'twice'], env);
      assert.match(duplicate.stderr, /already exists/);
      const badUrl = await runCli(['token', 'list'], { DATABASE_URL: 'mysql://nope' });
      assert.match(badUrl.stderr, /DATABASE_URL must be/);
    } finally {
      await opened.cleanup();
    }
  });
});
