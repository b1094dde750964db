/**
 * The SQLite reader threads (src/store/sqlite/reader-pool.ts): a thread that dies
 * fails the reads it had as the store being unavailable, nothing hangs, the next
 * read starts a new thread, and close() ends them all, holding the process until they have.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { StoreUnavailableError } from '../../src/store/errors.js';
import { ReaderPool } from '../../src/store/sqlite/reader-pool.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../support/temp.js';

describe('SQLite reader threads', () => {
  it('reads of a thread that dies fail as unavailable; the next read starts a new thread; close() ends them', async () => {
    const dir = join(tempDir(), 'later');
    const path = join(dir, 'plantstore.db');
    // No file yet: each reader thread fails to open it, and dies.
    const pool = new ReaderPool({ path, busyTimeoutMs: 50, timeLimitMs: 5000 }, 2);
    try {
      const results = await Promise.allSettled([
        pool.call('plants', 'count', [{}]),
        pool.call('plants', 'page', [{ limit: 10, terms: ['monstera'] }]),
        pool.call('changes', 'bounds', []),
      ]);
      for (const result of results) {
        assert.equal(result.status, 'rejected');
        assert.ok(result.reason instanceof StoreUnavailableError, String(result.reason));
        assert.match(result.reason.message, /reader thread stopped/);
      }
      mkdirSync(dir, { recursive: true });
      const store = SqliteStore.open({ path, readers: 1 });
      await store.plants.createPlant({ id: 7n, name: 'Monstera' });
      await store.close();
      // New threads, which find the file now.
      assert.deepEqual(await pool.call('plants', 'count', [{}]), { count: 1, exact: true });
      assert.equal(
        (await pool.call('plants', 'page', [{ limit: 10, terms: ['monstera'] }])).json,
        '[{"id":7,"name":"Monstera"}]',
      );
    } finally {
      await pool.close();
    }
    await assert.rejects(pool.call('plants', 'count', [{}]), StoreUnavailableError);
  });

  it('close() holds the process until the threads exit, even when a read answers after close() began', async () => {
    // Before the fix the late answer let go of the thread, and a process with nothing else to do ended with
    // close() still pending (a test run saw it as "the event loop has already resolved").
    const child = fileURLToPath(new URL('./reader-pool-close-child.ts', import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', child], { encoding: 'utf8' });
    assert.equal(stdout.trim(), 'closed; the read answered {"count":1,"exact":true}');
  });
});
