/**
 * The change log on SQLite, written by the plant writes themselves since migration
 * 0011 (src/store/sqlite/change-log-writes.ts), not by triggers: the entries of a
 * batch of writes, of an import and of a copy, in the order the changes were made.
 * (test/store/change-log.test.ts covers what both stores log for each kind of write.)
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { PlantChangeEntry } from '../../src/store/types.js';
import { copySqliteStore, withSqliteStore } from '../support/sqlite-stores.js';
import { tempDir } from '../support/temp.js';
import { importRows } from '../support/plant-rows.js';

const MAX = 2n ** 63n - 1n;

const summary = (entries: readonly PlantChangeEntry[]) =>
  entries.map((e) => `${e.type} ${e.plantId} ${e.tag ?? '-'} ${e.payload}`);

function consecutive(entries: readonly PlantChangeEntry[]): void {
  entries.forEach((entry, i) => assert.equal(entry.position, (entries[0] as PlantChangeEntry).position + BigInt(i)));
}

describe('SQLite change log, written by the writes', () => {
  let dir: string;
  before(() => {
    dir = tempDir();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('has no trigger on plants: with a row trigger, an INSERT .. SELECT into plants (an import) copied its whole SELECT into a temporary table first', async () => {
    const path = join(dir, 'schema.db');
    await SqliteStore.open({ path }).close();
    const db = new Database(path, { readonly: true });
    try {
      assert.deepEqual(
        db.prepare("SELECT name FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = 'plants'").pluck().all(),
        [],
      );
    } finally {
      db.close();
    }
  });

  it("logs a batch's writes of one plant in the order they were made", async () => {
    const store = SqliteStore.open({ path: join(dir, 'batch.db') });
    try {
      const start = (await store.changes.bounds()).last;
      // Sent together, so the writer takes them in one batch or few, in this order.
      await Promise.all([
        store.plants.createPlant({ id: MAX, name: 'Fern', tag: 'green' }),
        store.plants.updatePlant({ id: MAX, name: 'Moss "soft"' }),
        store.plants.updatePlant({ id: MAX, tag: null }),
        store.plants.updatePlant({ id: MAX, tag: null }), // changes nothing: no entry
        store.plants.deletePlant(MAX),
        store.plants.createPlant({ id: MAX, name: 'Ivy' }),
        store.plants.createPlant({ id: 7n, name: 'Sage', tag: 'herb' }),
        store.plants.createPlant({ id: 7n, name: 'Sage', tag: 'herb' }), // a replay: no entry
        store.plants.deletePlant(7n),
      ]);
      const entries = await store.changes.after(start, 100);
      assert.deepEqual(summary(entries), [
        `plant.created ${MAX} green {"id":${MAX},"name":"Fern","tag":"green"}`,
        `plant.updated ${MAX} green {"id":${MAX},"name":"Moss \\"soft\\"","tag":"green"}`,
        `plant.updated ${MAX} - {"id":${MAX},"name":"Moss \\"soft\\""}`,
        `plant.deleted ${MAX} - {"id":${MAX}}`,
        `plant.created ${MAX} - {"id":${MAX},"name":"Ivy"}`,
        'plant.created 7 herb {"id":7,"name":"Sage","tag":"herb"}',
        'plant.deleted 7 herb {"id":7}',
      ]);
      consecutive(entries);
      assert.equal((await store.changes.bounds()).last, (entries.at(-1) as PlantChangeEntry).position);
    } finally {
      await store.close();
    }
  });

  it('logs the plants an import created, in line order, and nothing for its unchanged, conflicting or invalid lines', async () => {
    const store = SqliteStore.open({ path: join(dir, 'import.db') });
    try {
      await store.plants.createPlant({ id: 1n, name: 'Stored' });
      const start = (await store.changes.bounds()).last;
      const staging = await store.plants.beginImport();
      await staging.stage(
        importRows([
          { id: 30n, name: 'Thirty', tag: 'b' },
          { id: 1n, name: 'Stored' }, // unchanged
          { id: 1n, name: 'Other' }, // a conflict
          { id: 20n, name: 'Twenty' },
          { id: 30n, name: 'Thirty', tag: 'b' }, // the same as line 1: unchanged
          { id: -MAX, name: 'Low', tag: 'a' },
        ]),
      );
      const outcome = await staging.apply('skip', 10);
      assert.equal(outcome.kind, 'applied');
      const entries = await store.changes.after(start, 100);
      assert.deepEqual(summary(entries), [
        'plant.created 30 b {"id":30,"name":"Thirty","tag":"b"}',
        'plant.created 20 - {"id":20,"name":"Twenty"}',
        `plant.created ${-MAX} a {"id":${-MAX},"name":"Low","tag":"a"}`,
      ]);
      consecutive(entries);
      // All or nothing, rejected: nothing logged.
      const rejected = await store.plants.beginImport();
      await rejected.stage(
        importRows([
          { id: 40n, name: 'Forty' },
          { id: 1n, name: 'Conflict' },
        ]),
      );
      assert.equal((await rejected.apply('all', 10)).kind, 'rejected');
      assert.equal((await store.changes.bounds()).last, (entries.at(-1) as PlantChangeEntry).position);
    } finally {
      await store.close();
    }
  });

  it("logs a copy: the replaced target's plants deleted, then every copied plant created, in id order", async () => {
    const [from, to] = [join(dir, 'copy-from.db'), join(dir, 'copy-to.db')];
    for (const [path, ids] of [
      [from, [5n, -2n, MAX]],
      [to, [9n, 3n]],
    ] as const) {
      await withSqliteStore(path, async (store) => {
        for (const id of ids)
          await store.plants.createPlant({ id, name: `Plant ${id}`, tag: path === from ? 'copied' : 'old' });
      });
    }
    assert.equal((await copySqliteStore(from, to, { replace: true, chunkSize: 2 })).committed, true);
    const store = SqliteStore.open({ path: to });
    try {
      const entries = await store.changes.after(0n, 100);
      assert.deepEqual(summary(entries), [
        'plant.created 9 old {"id":9,"name":"Plant 9","tag":"old"}',
        'plant.created 3 old {"id":3,"name":"Plant 3","tag":"old"}',
        'plant.deleted 3 old {"id":3}',
        'plant.deleted 9 old {"id":9}',
        'plant.created -2 copied {"id":-2,"name":"Plant -2","tag":"copied"}',
        'plant.created 5 copied {"id":5,"name":"Plant 5","tag":"copied"}',
        `plant.created ${MAX} copied {"id":${MAX},"name":"Plant ${MAX}","tag":"copied"}`,
      ]);
      consecutive(entries);
    } finally {
      await store.close();
    }
  });
});
