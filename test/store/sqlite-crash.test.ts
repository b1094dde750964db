/**
 * kill -9 in the middle of a stream of group-committed creates: every create that
 * was answered 200 must be on disk, with its exact content, after the crash.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { issueToken } from '../../src/tokens/token-service.js';
import { startServiceProcess } from '../support/service-process.js';
import { tempDir } from '../support/temp.js';
import { checkedFetch } from '../support/checked-fetch.js';

const CLIENTS = 32;
const ACKS_BEFORE_KILL = 600;

describe('SQLite group commit and kill -9', () => {
  it('loses no acknowledged create when the process is killed mid-stream', async () => {
    const dir = tempDir();
    const path = join(dir, 'plantstore.db');
    const setup = SqliteStore.open({ path });
    const { secret } = await issueToken(setup.tokens, { name: 'crash', scopes: ['plants:write'] });
    await setup.close();
    const service = await startServiceProcess({ DATABASE_URL: `sqlite:${path}` });
    const acknowledged = new Map<bigint, string>();
    let killed = false;
    try {
      // Every client sends creates back to back until the kill; ids above 2^53 check the digits too.
      const client = async (c: number) => {
        for (let k = 0; !killed; k++) {
          const id = 2n ** 60n + BigInt(c * 1_000_000 + k);
          const name = `client ${c} plant ${k}`;
          try {
            const response = await checkedFetch(`${service.url}/plants`, {
              method: 'POST',
              headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
              body: `{"id": ${id}, "name": "${name}"}`,
            });
            await response.arrayBuffer();
            if (response.status === 200) acknowledged.set(id, name);
          } catch {
            return; // the connection died with the process
          }
          if (acknowledged.size >= ACKS_BEFORE_KILL && !killed) {
            killed = true;
            await service.stop('SIGKILL');
          }
        }
      };
      await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
      assert.ok(acknowledged.size >= ACKS_BEFORE_KILL);

      const db = new Database(path, { readonly: true });
      const rows = new Map(
        (db.prepare('SELECT id, name FROM plants').safeIntegers(true).all() as { id: bigint; name: string }[]).map(
          (r) => [r.id, r.name],
        ),
      );
      db.close();
      const missing = [...acknowledged].filter(([id, name]) => rows.get(id) !== name);
      assert.deepEqual(missing, [], `${missing.length} of ${acknowledged.size} acknowledged creates lost`);
    } finally {
      await service.stop('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
