/**
 * The files the service and its commands write hold webhook signing secrets in clear (the store, its -wal and
 * -shm, backups) or the plants (exports): the service's user alone may read them, whatever the umask. The bug:
 * under the usual umask of 022 the folder the service made for the store was 0755 and every file 0644.
 * The umask is set to 022 here, so the outcome does not depend on the one the tests run with.
 */
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { backupSqlite, restoreSqlite } from '../../src/store/sqlite/backup.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { issueToken } from '../../src/tokens/token-service.js';
import { cli, cliServer } from '../cli/cli-process.js';
import { tempDir as newTempDir } from '../support/temp.js';

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

const made: string[] = [];
const tempDir = () => {
  made.push(newTempDir());
  return made.at(-1)!;
};

let umask: number;
before(() => {
  umask = process.umask(0o022);
});
after(() => {
  process.umask(umask);
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

describe('under umask 022', () => {
  it('the store folder the service creates is 0700; the store, its -wal and -shm, backups and restores 0600', async () => {
    const dir = tempDir();
    const folder = join(dir, 'new', 'data');
    const path = join(folder, 'plantstore.db');
    const store = SqliteStore.open({ path });
    try {
      await issueToken(store.tokens, { name: 'modes', scopes: ['plants:read'] });
      for (const file of [path, `${path}-wal`, `${path}-shm`]) assert.equal(mode(file), '600', file);
      assert.equal(mode(folder), '700', 'the store folder');
      assert.equal(mode(join(dir, 'new')), '700', 'every folder the service created');

      const backup = join(dir, 'backup.db');
      await backupSqlite(path, backup);
      assert.equal(mode(backup), '600', 'the backup');
    } finally {
      await store.close();
    }
    const restored = join(dir, 'restored', 'plantstore.db');
    await restoreSqlite(join(dir, 'backup.db'), restored);
    assert.equal(mode(restored), '600', 'the restored store');
    assert.equal(mode(join(dir, 'restored')), '700', 'the folder the restore created');
  });

  it("leaves a folder that exists as it is: that one is the operator's", () => {
    const folder = join(tempDir(), 'mine');
    mkdirSync(folder, { mode: 0o755 });
    const path = join(folder, 'plantstore.db');
    const store = SqliteStore.open({ path });
    return store.close().then(() => {
      assert.equal(mode(folder), '755');
      assert.equal(mode(path), '600');
    });
  });

  it('plantstore plants export --output writes a 0600 file', async () => {
    const { h, url, env } = await cliServer();
    try {
      const out = join(tempDir(), 'plants.ndjson');
      const run = await cli(['plants', 'export', '--output', out, '--url', url], env);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(mode(out), '600');
    } finally {
      await h.close();
    }
  });
});
