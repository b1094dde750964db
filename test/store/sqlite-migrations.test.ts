/**
 * SQLite migrations on a store that already holds data: migration 5 rebuilds the
 * plants table to add the generated json column, so it must carry every row over
 * exactly (int64 extremes, escaped names, NULL tags), keep the tag index, and leave
 * the pages GET /plants serves identical to what json_object would write. The
 * rewrite's WAL is truncated afterwards rather than left as large as the table.
 */
import assert from 'node:assert/strict';
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { migrationsOf } from '../../src/store/migrations.js';
import { migrate, SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../support/temp.js';
import { unversioned } from '../support/assertions.js';

const MIN_INT64 = -9223372036854775808n;
const MAX_INT64 = 9223372036854775807n;
const AWKWARD = 'quote " backslash \\ control \u0001 ünïcödé 🌱 \u2028 </script>';

/** A store file as version 4 of the schema left it, holding `plants`. */
function storeAtVersion4(path: string, plants: readonly [bigint, string, string | null][]): void {
  const db = new Database(path);
  migrate(db, 4);
  const insert = db.prepare('INSERT INTO plants (id, name, tag, created_at) VALUES (?, ?, ?, 0)');
  for (const plant of plants) insert.run(...plant);
  db.close();
}

describe('SQLite migration 5 (plant json column)', () => {
  it('carries existing plants over exactly and serves them as json_object would write them', async () => {
    const dir = tempDir();
    const path = join(dir, 'plantstore.db');
    const plants: [bigint, string, string | null][] = [
      [MIN_INT64, 'min', 'edge'],
      [-9007199254740993n, 'below -2^53', null],
      [1n, AWKWARD, AWKWARD],
      [9007199254740993n, 'above 2^53', 'edge'],
      [MAX_INT64, 'max', null],
    ];
    storeAtVersion4(path, plants);

    const store = SqliteStore.open({ path });
    try {
      // The rebuild went through the WAL; the store checkpoints and truncates it after migrating.
      assert.equal(statSync(`${path}-wal`).size, 0);
      const page = await store.plants.listPlantsPage({ limit: 10 });
      // What the store wrote before the json column existed, for the same rows.
      const probe = new Database(path, { readonly: true });
      const expected = probe
        .prepare(
          "SELECT json_group_array(json(iif(tag IS NULL, json_object('id', id, 'name', name), json_object('id', id, 'name', name, 'tag', tag)))) FROM (SELECT * FROM plants ORDER BY id)",
        )
        .pluck()
        .get() as string;
      const version = probe.prepare('SELECT max(version) FROM schema_migrations').pluck().get();
      const tagPlan = probe
        .prepare("EXPLAIN QUERY PLAN SELECT id FROM plants WHERE tag = 'edge' ORDER BY id")
        .all() as { detail: string }[];
      probe.close();

      assert.equal(page.json, expected);
      assert.equal(page.lastId, MAX_INT64);
      assert.equal(page.hasMore, false);
      assert.equal(version, migrationsOf('sqlite').at(-1)?.version);
      assert.ok(
        tagPlan.some((step) => step.detail.includes('plants_tag_id')),
        JSON.stringify(tagPlan),
      );
      for (const [id, name, tag] of plants) {
        assert.deepEqual(unversioned(await store.plants.getPlant(id)), tag === null ? { id, name } : { id, name, tag });
      }
      // A plant created after the migration gets its JSON from the generated column too.
      assert.equal((await store.plants.createPlant({ id: 2n, name: 'two' })).kind, 'created');
      const after = await store.plants.listPlantsPage({ limit: 2, after: 1n });
      assert.equal(after.json, '[{"id":2,"name":"two"},{"id":9007199254740993,"name":"above 2^53","tag":"edge"}]');
      assert.equal(after.hasMore, true);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
