/**
 * The upkeep the writer thread's connection (writer-connection.ts) does after an
 * import, once the import's answer is sent: a checkpoint (the import's commit does
 * none, so its answer does not wait for one), and a new connection, to free what
 * FTS5 keeps per connection after a large transaction (the search index's hash of
 * pending words, never shrunk). These tests pin when: after an import is applied,
 * the renewal once no import is still staging (each stages in a temp table of the
 * connection), and neither for other writes; and that the writes on either side of
 * a renewal all land. The worker calls afterReply() after each answer; so do they.
 */
import assert from 'node:assert/strict';
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { WriterConnection } from '../../src/store/sqlite/writer-connection.js';
import type { DelegatedMethod, DelegatedStore, WriteArgs } from '../../src/store/sqlite/writer-protocol.js';
import { tempDir } from '../support/temp.js';
import { createWrite, numberedImportRows } from '../support/plant-rows.js';

const rows = (from: number, count: number) => numberedImportRows(from, count, (id) => `Fern ${id}`);

function idsOnDisk(path: string): bigint[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare('SELECT id FROM plants ORDER BY id').pluck().safeIntegers(true).all() as bigint[];
  } finally {
    db.close();
  }
}

describe('SQLite writer connection', () => {
  let dir: string;
  let count = 0;
  before(() => {
    dir = tempDir();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** A write as the worker makes it: the call, then the upkeep after its answer. */
  async function call<S extends DelegatedStore, M extends DelegatedMethod<S>>(
    connection: WriterConnection,
    store: S,
    method: M,
    args: WriteArgs<S, M>,
  ): Promise<unknown> {
    try {
      return await connection.call(store, method, args);
    } finally {
      connection.afterReply();
    }
  }

  /** A migrated store file of its own and a writer connection on it. */
  async function newConnection(): Promise<{ path: string; connection: WriterConnection }> {
    const path = join(dir, `store-${++count}.db`);
    await SqliteStore.open({ path }).close();
    return { path, connection: new WriterConnection(path, 1000) };
  }

  it('is renewed after an import is applied, and writes go on after it', async () => {
    const { path, connection } = await newConnection();
    try {
      connection.applyPlantWrites([createWrite({ id: 1n, name: 'Before' })]);
      const id = (await call(connection, 'imports', 'begin', [])) as number;
      await call(connection, 'imports', 'stage', [id, rows(100, 53)]);
      assert.equal(connection.renewals, 0, 'staging renews nothing');
      // 53 lines: five statements of ten rows, then three of one (plant-import.ts stages so).
      assert.equal(((await call(connection, 'imports', 'apply', [id, 'all', 10])) as { kind: string }).kind, 'applied');
      assert.equal(connection.renewals, 1);
      assert.equal(connection.applyPlantWrites([createWrite({ id: 2n, name: 'After' })])[0]?.kind, 'created');
    } finally {
      connection.close();
    }
    assert.deepEqual(idsOnDisk(path), [1n, 2n, ...rows(100, 53).map((row) => row.id)]);
  });

  it('waits until no import is staging, whether the last one is applied or aborted', async () => {
    const { path, connection } = await newConnection();
    try {
      const begin = async () => (await call(connection, 'imports', 'begin', [])) as number;
      const a = await begin();
      const b = await begin();
      await call(connection, 'imports', 'stage', [a, rows(10, 5)]);
      await call(connection, 'imports', 'stage', [b, rows(20, 5)]);
      await call(connection, 'imports', 'apply', [a, 'all', 10]);
      assert.equal(connection.renewals, 0, 'import b still has rows staged on the connection');
      // b's staged rows survived a's apply: renewing then would have dropped its temp table.
      assert.equal(((await call(connection, 'imports', 'apply', [b, 'all', 10])) as { kind: string }).kind, 'applied');
      assert.equal(connection.renewals, 1);

      const c = await begin();
      const d = await begin();
      await call(connection, 'imports', 'stage', [c, rows(30, 5)]);
      await call(connection, 'imports', 'apply', [c, 'all', 10]);
      assert.equal(connection.renewals, 1, 'import d has begun');
      await call(connection, 'imports', 'abort', [d]);
      assert.equal(connection.renewals, 2);
    } finally {
      connection.close();
    }
    assert.equal(idsOnDisk(path).length, 15);
  });

  it('answers an import before copying its pages into the database file, and copies them right after', async () => {
    const { path, connection } = await newConnection();
    try {
      const sizeBefore = statSync(path).size;
      const id = (await call(connection, 'imports', 'begin', [])) as number;
      await call(connection, 'imports', 'stage', [id, rows(1000, 20_000)]);
      assert.equal(((await connection.call('imports', 'apply', [id, 'all', 10])) as { kind: string }).kind, 'applied');
      // Committed (in the WAL, fsync'd), not yet checkpointed: the file is as it was.
      assert.equal(statSync(path).size, sizeBefore);
      connection.afterReply();
      assert.ok(
        statSync(path).size > sizeBefore + 1_000_000,
        `the file is ${statSync(path).size} bytes after the checkpoint, ${sizeBefore} before`,
      );
    } finally {
      connection.close();
    }
    assert.equal(idsOnDisk(path).length, 20_000);
  });

  it('is not renewed by other writes, nor by an import that is only aborted', async () => {
    const { connection } = await newConnection();
    try {
      connection.applyPlantWrites(rows(1, 20).map(({ id, name }) => createWrite({ id, name })));
      connection.afterReply();
      await call(connection, 'maintenance', 'probeWrite', []);
      await call(connection, 'tokens', 'insertToken', [
        {
          id: 't1',
          name: 'one',
          secretHash: 'x'.repeat(64),
          scopes: ['plants:read'],
          createdAt: new Date(),
          expiresAt: null,
          createdBy: null,
        },
      ]);
      const id = (await call(connection, 'imports', 'begin', [])) as number;
      await call(connection, 'imports', 'stage', [id, rows(100, 5)]);
      await call(connection, 'imports', 'abort', [id]);
      assert.equal(connection.renewals, 0);
    } finally {
      connection.close();
    }
  });

  it('lets an applied import end without a call to the writer (which would wait behind that upkeep)', async () => {
    const path = join(dir, `store-${++count}.db`);
    const store = SqliteStore.open({ path });
    const plantImport = await store.plants.beginImport();
    try {
      await plantImport.stage(rows(1, 10));
      assert.equal((await plantImport.apply('all', 10)).kind, 'applied');
    } finally {
      await store.close();
    }
    // The import route ends every import so; with the writer gone, a call would fail.
    await plantImport.abort();
  });
});
