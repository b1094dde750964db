/**
 * Group commit when the SQLite writer thread dies: whether the unit in flight was
 * committed is unknown, so it fails as unavailable, and so does everything queued
 * behind it; nothing hangs, and close() still resolves.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { StoreUnavailableError } from '../../src/store/errors.js';
import { GroupCommitWriter } from '../../src/store/sqlite/group-commit.js';
import { tempDir } from '../support/temp.js';
import { createWrite } from '../support/plant-rows.js';

describe('SQLite group commit when the writer thread dies', () => {
  it('rejects the unit in flight and every queued write as unavailable, and close() resolves', async () => {
    const dir = tempDir();
    // A directory that does not exist: the writer thread cannot open the file, and dies.
    const writer = new GroupCommitWriter({ path: join(dir, 'missing', 'plantstore.db'), busyTimeoutMs: 50 });
    try {
      const results = await Promise.allSettled([
        writer.write(createWrite({ id: 1n, name: 'in flight' })),
        writer.call('tokens', 'recordTokenUse', ['a-token-id', new Date()]),
        writer.write(createWrite({ id: 2n, name: 'queued' })),
        writer.write({ op: 'delete', id: 1n }),
      ]);
      for (const result of results) {
        assert.equal(result.status, 'rejected');
        assert.ok(result.reason instanceof StoreUnavailableError, String(result.reason));
        assert.match(result.reason.message, /writer thread stopped/);
      }
      assert.deepEqual(writer.stats(), { batches: 0, operations: 0 });
    } finally {
      await writer.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
