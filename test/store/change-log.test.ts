/**
 * The change log (migration 0009) on every store: each create, real change and
 * delete, whatever made it (the store's writes, an import), gets the next position
 * and the payload webhooks carry; no-op changes and failed preconditions get none;
 * bounds and retention (the store's prune, and the job that calls it).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { ChangeLogRetention } from '../../src/events/retention.js';
import type { OpenedTestStore } from '../support/backends.js';
import { postgresAvailable, postgresBackend, sqliteBackend, testBackends } from '../support/backends.js';
import { withAdminClient } from '../support/postgres.js';
import type { ChangeLogBounds } from '../../src/store/types.js';
import { importRow, numberedImportRows } from '../support/plant-rows.js';

/** The bounds' positions (the history is random). */
const positions = ({ last, oldest }: ChangeLogBounds) => ({ last, oldest });

for (const backend of testBackends())
  describe(`change log [${backend.name}]`, () => {
    let opened: OpenedTestStore;
    before(async () => {
      opened = await backend.open();
    });
    after(() => opened.cleanup());

    it('logs every change in order, with consecutive positions and the webhook payloads', async () => {
      const { plants, changes } = opened.store;
      assert.deepEqual(positions(await changes.bounds()), { last: 0n, oldest: undefined });
      await plants.createPlant({ id: 9223372036854775807n, name: 'Max "quoted"', tag: 'edge' });
      await plants.createPlant({ id: 9223372036854775807n, name: 'Max "quoted"', tag: 'edge' }); // a replay: no change
      await plants.createPlant({ id: 2n, name: 'two' });
      await plants.updatePlant({ id: 2n, name: 'two' }); // changes nothing
      await plants.updatePlant({ id: 2n, tag: 'green' });
      await plants.updatePlant({ id: 2n, name: 'TWO' }, [1n]); // precondition fails
      await plants.deletePlant(9223372036854775807n);
      const staging = await plants.beginImport();
      await staging.stage([importRow(1, { id: -5n, name: 'imported' })]);
      await staging.apply('all', 10);
      const entries = await changes.after(0n, 100);
      assert.deepEqual(
        entries.map((e) => [e.position, e.type, e.plantId, e.tag, e.payload]),
        [
          [
            1n,
            'plant.created',
            9223372036854775807n,
            'edge',
            '{"id":9223372036854775807,"name":"Max \\"quoted\\"","tag":"edge"}',
          ],
          [2n, 'plant.created', 2n, null, '{"id":2,"name":"two"}'],
          [3n, 'plant.updated', 2n, 'green', '{"id":2,"name":"two","tag":"green"}'],
          [4n, 'plant.deleted', 9223372036854775807n, 'edge', '{"id":9223372036854775807}'],
          [5n, 'plant.created', -5n, null, '{"id":-5,"name":"imported"}'],
        ],
      );
      assert.deepEqual(await changes.after(3n, 1).then((rows) => rows.map((r) => r.position)), [4n]);
      assert.deepEqual(positions(await changes.bounds()), { last: 5n, oldest: 1n });
    });

    it('prunes entries older than a time, oldest first, and keeps counting from the last position', async () => {
      const { plants, changes } = opened.store;
      assert.equal(await changes.prune(new Date(Date.now() + 60_000), 2), 2);
      assert.deepEqual(positions(await changes.bounds()), { last: 5n, oldest: 3n });
      assert.equal(await changes.prune(new Date(Date.now() + 60_000), 100), 3);
      assert.deepEqual(positions(await changes.bounds()), { last: 5n, oldest: undefined });
      await plants.createPlant({ id: 3n, name: 'three' });
      assert.deepEqual(
        (await changes.after(5n, 10)).map((e) => e.position),
        [6n],
      );
      assert.equal(await changes.prune(new Date(Date.now() - 60_000), 100), 0);
    });

    it("reads an import's entries among other writers' in pages from any position, and prunes them oldest first", async () => {
      const { plants, changes } = opened.store;
      const start = (await changes.bounds()).last;
      await plants.createPlant({ id: 1_000n, name: 'before' });
      const staging = await plants.beginImport();
      await staging.stage(numberedImportRows(2_000, 2500, (id) => `imported ${id - 2_000}`));
      await staging.apply('all', 10);
      await plants.createPlant({ id: 1_001n, name: 'after' });
      const positions: bigint[] = [];
      for (
        let after = start + 700n, page = await changes.after(after, 1000);
        page.length > 0;
        page = await changes.after(after, 1000)
      ) {
        positions.push(...page.map((e) => e.position));
        after = page.at(-1)?.position ?? after;
      }
      const expected = Array.from({ length: 2502 - 700 }, (_, i) => start + 701n + BigInt(i));
      assert.deepEqual(positions, expected, 'every position once, in order, from the middle of the import on');
      assert.equal((await changes.after(start + 2501n, 10))[0]?.payload, '{"id":1001,"name":"after"}');
      const oldest = (await changes.bounds()).oldest ?? 0n;
      const pruned = await changes.prune(new Date(Date.now() + 60_000), Number(start - oldest) + 1 + 100);
      assert.equal(pruned, Number(start - oldest) + 1 + 100);
      const { last, oldest: left } = await changes.bounds();
      assert.deepEqual(
        { last, left },
        { last: start + 2502n, left: start + 101n },
        "the import's first 99 entries went",
      );
    });

    it('signals committed changes to a watcher', async () => {
      const { plants, changes } = opened.store;
      let calls = 0;
      const heard = new Promise<void>((resolve) => {
        const stop = changes.watch(() => {
          calls += 1;
          stop();
          resolve();
        });
      });
      // On PostgreSQL the LISTEN connection may still be opening: write until it hears.
      for (let id = 100n; calls === 0 && id < 200n; id++) {
        await plants.createPlant({ id, name: `plant ${id}` });
        await Promise.race([heard, new Promise((resolve) => setTimeout(resolve, 100))]);
      }
      await heard;
      assert.ok(calls >= 1);
    });
  });

for (const backend of testBackends())
  describe(`change log: previous tags and history [${backend.name}]`, () => {
    let own: OpenedTestStore;
    before(async () => {
      own = await backend.open();
    });
    after(() => own.cleanup());

    it('notes the tag a change of the tag replaced (null for none), on changes of the tag only; keeps one history', async () => {
      const { plants, changes } = own.store;
      const { history, last } = await changes.bounds();
      assert.match(history, /^[0-9a-f]{16}$/);
      await plants.createPlant({ id: 50n, name: 'fifty' });
      await plants.updatePlant({ id: 50n, tag: 'hp' });
      await plants.updatePlant({ id: 50n, name: 'Fifty' });
      await plants.updatePlant({ id: 50n, name: 'FIFTY', tag: 'office' });
      await plants.updatePlant({ id: 50n, tag: null });
      await plants.deletePlant(50n);
      const entries = await changes.after(last, 100);
      assert.deepEqual(
        entries.map((e) => [e.type, e.tag, 'previousTag' in e ? e.previousTag : 'kept']),
        [
          ['plant.created', null, 'kept'],
          ['plant.updated', 'hp', null],
          ['plant.updated', 'hp', 'kept'],
          ['plant.updated', 'office', 'hp'],
          ['plant.updated', null, 'office'],
          ['plant.deleted', null, 'kept'],
        ],
      );
      assert.equal((await changes.bounds()).history, history);
    });
  });

describe('change log retention job', () => {
  it('deletes the entries older than EVENTS_RETENTION_HOURS, however many, and keeps the rest', async () => {
    const opened = await sqliteBackend.open();
    try {
      const staging = await opened.store.plants.beginImport();
      await staging.stage(numberedImportRows(0, 25_000));
      await staging.apply('all', 10);
      const retention = new ChangeLogRetention(opened.store.changes, 1, pino({ level: 'silent' }));
      assert.equal(await retention.prune(Date.now() + 59 * 60_000), 0, 'younger than an hour: kept');
      assert.equal(await retention.prune(Date.now() + 61 * 60_000), 25_000);
      assert.deepEqual(positions(await opened.store.changes.bounds()), { last: 25_000n, oldest: undefined });
    } finally {
      await opened.cleanup();
    }
  });
});

describe('change log on PostgreSQL, written from another search_path', { skip: !postgresAvailable() }, () => {
  it("logs a plant written by a session whose search_path is not the store's schema", async () => {
    const opened = await postgresBackend.open();
    try {
      const schema =
        /search_path%3D([a-z0-9_]+)/i.exec(opened.databaseUrl)?.[1] ??
        /search_path=([a-z0-9_]+)/i.exec(decodeURIComponent(opened.databaseUrl))?.[1];
      assert.ok(schema !== undefined, `no schema in ${opened.databaseUrl}`);
      await withAdminClient(async (client) => {
        await client.query(
          `INSERT INTO ${schema}.plants (id, name, name_key, name_words) VALUES (7, 'seven', 'seven', 'seven')`,
        );
      });
      assert.deepEqual(
        (await opened.store.changes.after(0n, 10)).map((e) => [e.position, e.payload]),
        [[1n, '{"id":7,"name":"seven"}']],
      );
    } finally {
      await opened.cleanup();
    }
  });
});
