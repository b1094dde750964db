/**
 * An import beside other writers, on every store (and on PostgreSQL beside a second
 * instance on the same schema): while an import's body is still arriving, creates of
 * other ids (and of ids the import has staged) commit as if it were not there; two
 * imports with overlapping ids staged in opposite orders both commit; the import's
 * change-log positions are taken when it commits, after the creates that committed
 * while it was open.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import pg from 'pg';
import type { CreatePlantOutcome, ImportRow, PlantImport, PlantStore, Store } from '../../src/store/types.js';
import { postgresAvailable, testBackends, type OpenedTestStore } from '../support/backends.js';
import { twoInstancesOnNewSchema, withinBound } from '../support/postgres.js';
import { importRows } from '../support/plant-rows.js';

/** Import lines for `ids`, numbered from `firstLine`. */
const rows = (ids: readonly bigint[], firstLine = 1): ImportRow[] =>
  importRows(
    ids.map((id) => ({ id, name: `imported ${id}` })),
    firstLine,
  );

const range = (from: number, count: number): bigint[] => Array.from({ length: count }, (_, i) => BigInt(from + i));

/** Imports begun by the running test: aborted after it, so a failure cannot leave one holding the store open. */
const begun: PlantImport[] = [];

async function beginImport(plants: PlantStore): Promise<PlantImport> {
  const staging = await plants.beginImport();
  begun.push(staging);
  return staging;
}

/** Stages `ids` in chunks of 1,000, as the import route does. */
async function stageAll(plants: PlantStore, ids: readonly bigint[]) {
  const staging = await beginImport(plants);
  const all = rows(ids);
  for (let start = 0; start < all.length; start += 1000) await staging.stage(all.slice(start, start + 1000));
  return staging;
}

function createAll(
  plants: PlantStore,
  ids: readonly bigint[],
  name = (id: bigint) => `created ${id}`,
): Promise<CreatePlantOutcome[]> {
  return Promise.all(ids.map((id) => plants.createPlant({ id, name: name(id) })));
}

function assertCreated(outcomes: readonly CreatePlantOutcome[], what: string) {
  assert.deepEqual(
    outcomes.map((o) => o.kind),
    outcomes.map(() => 'created'),
    what,
  );
}

/** The import beside writers on `store`, with `others` as further instances writing to the same data. */
function importBesideWriters(open: () => Promise<{ store: Store; others: readonly Store[]; close(): Promise<void> }>) {
  let opened: { store: Store; others: readonly Store[]; close(): Promise<void> };
  before(async () => {
    opened = await open();
  });
  afterEach(async () => {
    await Promise.all(begun.splice(0).map((staging) => staging.abort()));
  });
  after(() => opened.close());

  it('creates of other ids, on every instance, commit while an import is open; its positions come after theirs', async () => {
    const { store, others } = opened;
    const staging = await stageAll(store.plants, range(1, 3000));
    // The import is open (its body "paused" after 3,000 lines): unrelated creates go through meanwhile.
    assertCreated(await createAll(store.plants, range(10_001, 10)), 'creates on this instance');
    for (const [n, other] of others.entries())
      assertCreated(await createAll(other.plants, range(20_001 + 100 * n, 10)), 'creates on another instance');
    const before = (await store.changes.bounds()).last;
    const outcome = await staging.apply('all', 10);
    assert.deepEqual(outcome, { kind: 'applied', created: 3000, unchanged: 0, conflicts: [], conflictCount: 0 });
    const entries = await store.changes.after(before, 5000);
    assert.equal(entries.length, 3000);
    assert.deepEqual(
      entries.map((e) => e.position),
      range(Number(before) + 1, 3000),
      'consecutive positions, after the creates',
    );
    assert.deepEqual(new Set(entries.map((e) => e.plantId)), new Set(range(1, 3000)));
  });

  it('a create of an id the open import has staged commits at once, with its batch-mates; the import then reports the line', async () => {
    const { store } = opened;
    const staging = await stageAll(store.plants, range(30_001, 2000));
    const held = 30_500n;
    const outcomes = await createAll(store.plants, [held, ...range(40_001, 9)], (id) => `first ${id}`);
    assertCreated(outcomes, 'the staged id and its batch-mates');
    const outcome = await staging.apply('skip', 10);
    assert.deepEqual(outcome, {
      kind: 'applied',
      created: 1999,
      unchanged: 0,
      conflicts: [{ line: 500, id: held }],
      conflictCount: 1,
    });
    assert.equal((await store.plants.getPlant(held))?.name, `first ${held}`);
  });

  it('two imports with overlapping ids, staged in opposite orders, both commit: one creates, the other finds them unchanged', async () => {
    const { store, others } = opened;
    const second = others[0] ?? store;
    const low = range(50_001, 1000);
    const high = range(51_001, 1000);
    const a = await beginImport(second.plants);
    const b = await beginImport(store.plants);
    // a: low then high; b: high then low. Staging that took the ids' locks would deadlock here.
    await withinBound('a stages low', a.stage(rows(low)));
    const bHigh = b.stage(rows(high));
    await setTimeout(200); // b's chunk reaches the database first: only needed to make the old deadlock certain
    await withinBound('both stage high', Promise.all([bHigh, a.stage(rows(high, 1001))]));
    await withinBound('b stages low', b.stage(rows(low, 1001)));
    const [first, other] = await Promise.all([a.apply('all', 10), b.apply('all', 10)]);
    assert.equal(first.kind, 'applied');
    assert.equal(other.kind, 'applied');
    if (first.kind !== 'applied' || other.kind !== 'applied') return;
    assert.equal(first.created + other.created, 2000, 'every id created once');
    assert.equal(first.unchanged + other.unchanged, 2000, 'and found unchanged by the other import');
  });
}

for (const backend of testBackends())
  describe(`an import beside other writers [${backend.name}]`, () => {
    importBesideWriters(async () => {
      const opened: OpenedTestStore = await backend.open();
      return { store: opened.store, others: [], close: () => opened.cleanup() };
    });
  });

describe('an import beside other writers [postgres, two instances]', { skip: !postgresAvailable() }, () => {
  importBesideWriters(async () => {
    const instances = await twoInstancesOnNewSchema();
    return { store: instances.store, others: [instances.other], close: () => instances.close() };
  });
});

describe(
  'a batch of creates beside a transaction inserting one of its ids [postgres]',
  { skip: !postgresAvailable() },
  () => {
    it('only the create of that id waits for it; its batch-mates commit at once', async () => {
      const instances = await twoInstancesOnNewSchema();
      const holder = new pg.Client({ connectionString: instances.schema.url });
      await holder.connect();
      try {
        // What an import being applied does to an id: inserted, not yet committed (its change-log entries go in its
        // span).
        await holder.query('BEGIN');
        await holder.query("SET LOCAL plantstore.change_log = 'span'");
        await holder.query(
          "INSERT INTO plants (id, name, name_key, name_words) VALUES (60005, 'held', 'held', 'held')",
        );
        const held = instances.store.plants.createPlant({ id: 60_005n, name: 'held' });
        const mates = createAll(instances.store.plants, [...range(60_001, 4), ...range(60_006, 5)]);
        assertCreated(await withinBound('the batch-mates', mates), 'the batch-mates, while the id is held');
        await holder.query('COMMIT');
        assert.equal((await withinBound('the held id', held)).kind, 'replayed');
      } finally {
        await holder.end();
        await instances.close();
      }
    });
  },
);
