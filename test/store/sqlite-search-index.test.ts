/**
 * SQLite's search index (plants_search, FTS5) in step with the plants after every
 * kind of write: batches that create, change and delete one plant several times
 * over, imports, copies. The service writes the index itself (search-index.ts), so
 * nothing but these paths keeps it right. FTS5's integrity-check with rank 1
 * compares the whole index with the words in the plants' rows: a plant missing, a
 * word left behind, or words removed that were never indexed fail it.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { copySqliteStore, withSqliteStore } from '../support/sqlite-stores.js';
import { tempDir } from '../support/temp.js';
import type { PlantRecord } from '../../src/domain/plant.js';
import { importRow, importRows } from '../support/plant-rows.js';

/** Throws (SQLITE_CORRUPT_VTAB or a checksum mismatch) unless the index holds exactly the rows' words. */
function checkIndex(path: string): void {
  const db = new Database(path);
  try {
    db.exec("INSERT INTO plants_search (plants_search, rank) VALUES ('integrity-check', 1)");
  } finally {
    db.close();
  }
}

function idsMatching(path: string, query: string): bigint[] {
  const db = new Database(path, { readonly: true });
  try {
    return db
      .prepare('SELECT rowid FROM plants_search WHERE plants_search MATCH ? ORDER BY rowid')
      .pluck()
      .safeIntegers(true)
      .all(query) as bigint[];
  } finally {
    db.close();
  }
}

const MAX = 2n ** 63n - 1n;
const MIN = -(2n ** 63n);

describe('SQLite search index', () => {
  let dir: string;
  before(() => {
    dir = tempDir();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('follows batches that create, change and delete the same plants several times over', async () => {
    const path = join(dir, 'batches.db');
    const store = SqliteStore.open({ path });
    try {
      // Stored before: changed and deleted in the batches below.
      for (const id of [1n, 2n, 3n, MAX]) await store.plants.createPlant({ id, name: `Old fern ${id}`, tag: 'old' });
      // Sent together, so the writer takes them in few batches, each id's writes in order.
      const writes: Promise<unknown>[] = [];
      for (let round = 0; round < 3; round++) {
        for (const id of [1n, 2n, 3n, MAX, MIN, 10n, 11n]) {
          writes.push(store.plants.createPlant({ id, name: `Fern ${id} ${round}`, tag: 'new' }));
          writes.push(store.plants.updatePlant({ id, name: `Moss ${id} ${round}` }));
          writes.push(store.plants.updatePlant({ id, tag: null }));
          writes.push(store.plants.updatePlant({ id, name: `MOSS ${id} ${round}` })); // the same words: the index is left alone
          writes.push(store.plants.updatePlant({ id, tag: `tag${round}` }));
          if (id === 2n || id === 10n) writes.push(store.plants.deletePlant(id));
        }
      }
      writes.push(store.plants.deletePlant(3n, 'any'));
      await Promise.all(writes);
      const batches = store.groupCommitStats().batches;
      assert.ok(batches < writes.length / 2, `${writes.length} writes took ${batches} batches: too few shared one`);
    } finally {
      await store.close();
    }
    checkIndex(path);
    // 1, 11, MAX and MIN remain (2 and 10 are deleted each round, 3 at the end), renamed in round 2.
    assert.deepEqual(idsMatching(path, 'moss'), [MIN, 1n, 11n, MAX]);
    assert.deepEqual(idsMatching(path, 'tag2'), [MIN, 1n, 11n, MAX]);
    assert.deepEqual(idsMatching(path, 'old OR fern OR new'), []);
  });

  it('holds words of every script and escape exactly as the rows do', async () => {
    const path = join(dir, 'scripts.db');
    const names = [
      'Café "au lait" \\ fern',
      'Ёлка ель',
      '盆栽 松',
      'Rose 🌹 𝔉𝔢𝔯𝔫',
      'Line\u2028sep a\u0301b',
      'שושן צחור',
      'Æsir ﬁg straße',
    ];
    const store = SqliteStore.open({ path });
    try {
      await Promise.all(
        names.map((name, i) => store.plants.createPlant({ id: BigInt(i + 1), name, tag: `t${name.slice(0, 3)}` })),
      );
      await Promise.all(
        names.map((name, i) =>
          store.plants.updatePlant({ id: BigInt(i + 1), name: `${name} ${name.slice(1)}`, tag: null }),
        ),
      );
      await Promise.all(names.slice(0, 3).map((_, i) => store.plants.deletePlant(BigInt(i + 1))));
    } finally {
      await store.close();
    }
    checkIndex(path);
    assert.deepEqual(idsMatching(path, '"松"'), []);
    assert.deepEqual(idsMatching(path, 'rose'), [4n]);
  });

  it('holds what imports create, and nothing of the lines they leave out', async () => {
    const path = join(dir, 'imports.db');
    const store = SqliteStore.open({ path });
    try {
      await store.plants.createPlant({ id: 5n, name: 'Stored fern' });
      const runs: { rows: PlantRecord[]; mode: 'all' | 'skip' }[] = [
        // Every line new: indexed without looking the plants up.
        {
          rows: [
            { id: MAX, name: 'Ivy max', tag: 'climber' },
            { id: MIN, name: 'Ivy min' },
            { id: 7n, name: 'Ivy seven', tag: 'climber' },
          ],
          mode: 'all',
        },
        // An unchanged line (the stored plant), a line repeating an earlier one, a conflict (skipped).
        {
          rows: [
            { id: 5n, name: 'Stored fern' },
            { id: 8n, name: 'Sage' },
            { id: 8n, name: 'Sage' },
            { id: 7n, name: 'Not ivy' },
            { id: 9n, name: 'Sage two', tag: 'herb' },
          ],
          mode: 'skip',
        },
        // Rejected whole: nothing of it may reach the index.
        {
          rows: [
            { id: 20n, name: 'Thyme' },
            { id: 5n, name: 'Other fern' },
          ],
          mode: 'all',
        },
      ];
      for (const { rows, mode } of runs) {
        const plantImport = await store.plants.beginImport();
        await plantImport.stage(importRows(rows));
        await plantImport.apply(mode, 10);
        await plantImport.abort();
      }
    } finally {
      await store.close();
    }
    checkIndex(path);
    assert.deepEqual(idsMatching(path, 'ivy'), [MIN, 7n, MAX]);
    assert.deepEqual(idsMatching(path, 'sage'), [8n, 9n]);
    assert.deepEqual(idsMatching(path, 'thyme OR other'), []);
    assert.deepEqual(idsMatching(path, 'fern'), [5n]);
  });

  it('holds what imports in id order create (read back without a sort), and imports whose order breaks in a later chunk', async () => {
    const path = join(dir, 'imports-in-order.db');
    const store = SqliteStore.open({ path });
    const chunks = {
      inOrder: [
        [
          { id: MIN, name: 'Aloe min', tag: 'succulent' },
          { id: 1n, name: 'Aloe one' },
        ],
        [{ id: 2n, name: 'Aloe two' }],
        [{ id: MAX, name: 'Aloe max', tag: 'succulent' }],
      ],
      broken: [
        [
          { id: 30n, name: 'Cactus thirty' },
          { id: 31n, name: 'Cactus thirty-one' },
        ],
        [
          { id: 29n, name: 'Cactus twenty-nine', tag: 'spiny' },
          { id: 32n, name: 'Cactus thirty-two' },
        ],
      ],
    };
    try {
      for (const staged of Object.values(chunks)) {
        const plantImport = await store.plants.beginImport();
        let line = 0;
        for (const rows of staged) await plantImport.stage(rows.map((row) => importRow(++line, row)));
        assert.equal((await plantImport.apply('all', 10)).kind, 'applied');
        await plantImport.abort();
      }
    } finally {
      await store.close();
    }
    checkIndex(path);
    assert.deepEqual(idsMatching(path, 'aloe'), [MIN, 1n, 2n, MAX]);
    assert.deepEqual(idsMatching(path, 'succulent'), [MIN, MAX]);
    assert.deepEqual(idsMatching(path, 'cactus'), [29n, 30n, 31n, 32n]);
    assert.deepEqual(idsMatching(path, 'spiny'), [29n]);
    // Each plant's version is the import's base plus its line, whichever way the rows were read.
    const db = new Database(path, { readonly: true });
    try {
      const byVersion = db
        .prepare('SELECT id FROM plants ORDER BY version')
        .pluck()
        .safeIntegers(true)
        .all() as bigint[];
      assert.deepEqual(byVersion, [MIN, 1n, 2n, MAX, 30n, 31n, 29n, 32n]);
    } finally {
      db.close();
    }
  });

  it('is rebuilt on a copy, also one that replaces a target holding other plants', async () => {
    const [from, to] = [join(dir, 'copy-from.db'), join(dir, 'copy-to.db')];
    for (const [path, name] of [
      [from, 'Rose'],
      [to, 'Tulip'],
    ] as const) {
      await withSqliteStore(path, async (store) => {
        for (let id = 1n; id <= 30n; id++)
          await store.plants.createPlant(
            id % 2n === 0n
              ? { id: id * 3n, name: `${name} ${id}`, tag: 'even' }
              : { id: id * 3n, name: `${name} ${id}` },
          );
      });
    }
    assert.equal((await copySqliteStore(from, to, { replace: true, chunkSize: 7 })).committed, true);
    checkIndex(to);
    assert.equal(idsMatching(to, 'rose').length, 30);
    assert.deepEqual(idsMatching(to, 'tulip'), []);
    assert.equal(idsMatching(to, 'even').length, 15);
  });
});
