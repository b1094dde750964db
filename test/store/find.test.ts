/**
 * Finding plants in the store, on every backend, against a model: the definitions in
 * src/domain/search-text.ts, applied in plain JS to the same plants. Both stores
 * must find and order exactly what the model does, so they agree with each other:
 * search (word prefixes, every term, names and tags, case and marks ignored), every
 * sort order (name order by folded name, code point by code point, ties by id),
 * several tags, counts, and walks through every page of every combination.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { findColumns, nameKey, searchTerms } from '../../src/domain/search-text.js';
import type { ListPlantsQuery, PlantFilter, PlantOrder, PlantRecord, Store } from '../../src/store/types.js';
import { testBackends, type OpenedTestStore } from '../support/backends.js';
import { pageRecords } from '../support/pages.js';
import { importRows } from '../support/plant-rows.js';

/** Names chosen where definitions could slip: case, marks, ligatures, non-Latin scripts, astral characters,
 * punctuation, ties. */
const NAMES = [
  'Monstera deliciosa',
  'monstera Adansonii',
  'MONSTERA',
  'Café au lait dahlia',
  'cafe',
  'Ficus elastica',
  'ﬁcus lyrata',
  'Ficus',
  'Zinnia',
  'zinnia',
  'Ærø fern',
  'Édelweiss',
  'edelweiss',
  'Straße',
  'Strasse',
  'Кактус',
  'кактус опунция',
  '仙人掌',
  '🌱 sprout',
  'sprout 🌱',
  'aloe-vera',
  'Aloe vera',
  'x',
  'X',
  '42 palm',
  'palm 42b',
  'İris',
  'Ökologisch',
  '\u{E000} private use',
  '\u{1F335} cactus',
  'Snake plant (Sansevieria)',
  'snake-plant',
  'Spider plant',
  'spider',
  'Peace lily',
  'peace',
  'Lily of the valley',
  'Calathea',
];
const TAGS = [undefined, 'houseplant', 'Outdoor', 'shade-tolerant', 'Succulent', 'été'];

function plantsOf(): PlantRecord[] {
  const plants: PlantRecord[] = [];
  let id = -50n;
  for (const [i, name] of NAMES.entries()) {
    for (let copy = 0; copy < 3; copy++) {
      const tag = TAGS[(i + copy) % TAGS.length];
      plants.push(tag === undefined ? { id, name } : { id, name, tag });
      id += copy === 1 ? 9_007_199_254_740_993n : 7n; // ids past 2^53 among them
    }
  }
  return plants;
}

/** The model: which plants a filter finds. */
function matches(plant: PlantRecord, { tags, terms }: PlantFilter): boolean {
  if (tags !== undefined && tags.length > 0 && (plant.tag === undefined || !tags.includes(plant.tag))) return false;
  if (terms === undefined || terms.length === 0) return true;
  const { nameWords, tagWords } = findColumns(plant.name, plant.tag);
  const words = `${nameWords} ${tagWords}`.split(' ').filter((word) => word !== '');
  return terms.every((term) => words.some((word) => word.startsWith(term)));
}

const byId = (a: PlantRecord, b: PlantRecord) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
/** Name order: folded names compared by code point, which is UTF-8 byte order (not JS's UTF-16 order), then id. */
const byName = (a: PlantRecord, b: PlantRecord) =>
  Buffer.compare(Buffer.from(nameKey(a.name)), Buffer.from(nameKey(b.name))) || byId(a, b);

/** The model: the plants a filter finds, in an order. */
function expected(plants: readonly PlantRecord[], order: PlantOrder, filter: PlantFilter): PlantRecord[] {
  const found = plants.filter((plant) => matches(plant, filter));
  const ascending = order === 'id' || order === '-id' ? found.sort(byId) : found.sort(byName);
  return order.startsWith('-') ? ascending.reverse() : ascending;
}

/** Every page of a query, following each page's cursor (its last id and key), as the route does. */
async function walk(store: Store, query: ListPlantsQuery): Promise<{ plants: PlantRecord[]; pages: number }> {
  const plants: PlantRecord[] = [];
  let next: ListPlantsQuery | undefined = query;
  let pages = 0;
  while (next !== undefined) {
    const page = await store.plants.listPlantsPage(next);
    plants.push(...pageRecords(page.json));
    pages++;
    assert.ok(pages < 1000, 'the walk never ends');
    next = page.hasMore ? { ...query, after: page.lastId, afterKey: page.lastKey } : undefined;
  }
  return { plants, pages };
}

const describeQuery = (query: object) =>
  JSON.stringify(query, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v));

const QUERIES: string[] = [
  'mon',
  'MON delic',
  'cafe',
  'CAFÉ',
  'fi',
  'ficus',
  'ficu lyr',
  'edel',
  'strasse',
  'straße',
  'кактус',
  'КАК',
  '仙人掌',
  'sprout',
  'aloe vera',
  'vera aloe',
  'house',
  'outdoor',
  'shade',
  'tolerant',
  'ete',
  'x',
  '42',
  '42b',
  'iris',
  'okolog',
  'cactus',
  'plant',
  'snake plant',
  'spider pla',
  'lily',
  'ly',
  'nothing',
  'sansevieria',
  'sansevieriaz',
  'of the',
];
const ORDERS: PlantOrder[] = ['id', '-id', 'name', '-name'];

for (const backend of testBackends())
  describe(`finding plants in the store [${backend.name}]`, () => {
    let opened: OpenedTestStore;
    let store: Store;
    const plants = plantsOf();
    before(async () => {
      opened = await backend.open();
      store = opened.store;
      for (const plant of plants) assert.equal((await store.plants.createPlant(plant)).kind, 'created');
    });
    after(() => opened?.cleanup());

    it('finds what the model finds for every query, in every order', async () => {
      for (const q of QUERIES) {
        const terms = searchTerms(q);
        for (const order of ORDERS) {
          const page = await store.plants.listPlantsPage({ limit: 1000, order, terms });
          assert.deepEqual(pageRecords(page.json), expected(plants, order, { terms }), `q=${q} sort=${order}`);
        }
      }
    });

    it('finds "Monstera deliciosa" by any word prefix, case-insensitively, every term required', async () => {
      const names = async (q: string) =>
        pageRecords((await store.plants.listPlantsPage({ limit: 1000, terms: searchTerms(q) })).json).map(
          (p) => p.name,
        );
      assert.ok((await names('mon')).includes('Monstera deliciosa'));
      assert.ok((await names('delic')).includes('Monstera deliciosa'));
      assert.ok((await names('DELICIOSA monst')).includes('Monstera deliciosa'));
      assert.ok(!(await names('mon lyrata')).includes('Monstera deliciosa'), 'every term must match');
      assert.ok(!(await names('onstera')).includes('Monstera deliciosa'), 'a term matches the start of a word only');
      assert.ok((await names('cafe')).includes('Café au lait dahlia'), 'cafe finds Café');
      assert.ok((await names('ete')).length > 0, 'ete finds the tag été');
    });

    it('orders every page walk exactly as the model, for every sort, tag and search combination', async () => {
      const filters: PlantFilter[] = [
        {},
        { tags: ['houseplant'] },
        { tags: ['Outdoor', 'été', 'unknown'] },
        { terms: ['plant'] },
        { tags: ['houseplant', 'Succulent'], terms: ['s'] },
      ];
      for (const filter of filters) {
        for (const order of ORDERS) {
          for (const limit of [1, 4, 17]) {
            const query: ListPlantsQuery = { limit, order, ...filter };
            const { plants: walked } = await walk(store, query);
            assert.deepEqual(walked, expected(plants, order, filter), describeQuery(query));
          }
        }
      }
    });

    it('says a page has more exactly when a later matching plant exists', async () => {
      const all = expected(plants, 'name', { tags: ['Succulent'] });
      const exact = await store.plants.listPlantsPage({ limit: all.length, order: 'name', tags: ['Succulent'] });
      assert.equal(exact.hasMore, false);
      assert.equal(exact.lastId, all.at(-1)?.id);
      assert.equal(exact.lastKey, nameKey(all.at(-1)?.name ?? ''));
      const short = await store.plants.listPlantsPage({ limit: all.length - 1, order: 'name', tags: ['Succulent'] });
      assert.equal(short.hasMore, true);
      const empty = await store.plants.listPlantsPage({ limit: 10, order: '-name', terms: ['nothing'] });
      assert.deepEqual(empty, { json: '[]', lastId: undefined, hasMore: false });
    });

    it('counts what the model finds, exactly; estimated counts of small sets are exact too', async () => {
      for (const filter of [
        {},
        { tags: ['houseplant'] },
        { tags: ['Outdoor', 'été'] },
        { terms: ['plant'] },
        { terms: ['spider', 'plant'], tags: ['Outdoor'] },
        { terms: ['nothing'] },
      ]) {
        const count = expected(plants, 'id', filter).length;
        assert.deepEqual(
          await store.plants.countPlants(filter, 'exact'),
          { count, exact: true },
          describeQuery(filter),
        );
        assert.deepEqual(
          await store.plants.countPlants(filter, 'estimated'),
          { count, exact: true },
          describeQuery(filter),
        );
      }
    });

    it('finds a plant by its name and tag as they are after every kind of change, and not by what they were', async () => {
      const found = async (q: string) =>
        pageRecords((await store.plants.listPlantsPage({ limit: 1000, terms: searchTerms(q) })).json).map((p) => p.id);
      assert.equal((await store.plants.createPlant({ id: 5000n, name: 'Rubber tree', tag: 'glossy' })).kind, 'created');
      assert.deepEqual(await found('rubber glossy'), [5000n]);
      await store.plants.updatePlant({ id: 5000n, name: 'Ficus robusta' });
      assert.deepEqual(await found('rubber'), []);
      assert.deepEqual(await found('robusta glossy'), [5000n], "a rename keeps the tag's words");
      await store.plants.updatePlant({ id: 5000n, name: 'FICUS Robusta' });
      assert.deepEqual(await found('ficus robusta glossy'), [5000n], 'a rename to the same words keeps them found');
      await store.plants.updatePlant({ id: 5000n, tag: 'matte' });
      assert.deepEqual(await found('glossy'), []);
      assert.deepEqual(await found('robusta matte'), [5000n], "a retag keeps the name's words");
      await store.plants.updatePlant({ id: 5000n, tag: null });
      assert.deepEqual(await found('matte'), []);
      await store.plants.updatePlant({ id: 5000n, name: 'Árbol', tag: 'Tropical' });
      assert.deepEqual(await found('arbol trop'), [5000n]);
      const byName = await store.plants.listPlantsPage({ limit: 1, order: 'name', after: 0n, afterKey: 'arbo' });
      assert.match(byName.json, /"id":5000,/, 'the new name has its place in name order');
      await store.plants.deletePlant(5000n);
      assert.deepEqual(await found('arbol'), []);
    });
  });

/** More plants than a search's walk reads (src/store/sqlite/plant-find.ts, WINDOW) before the rare matches, in every
 * order. */
for (const backend of testBackends())
  describe(`finding rare plants past the common ones [${backend.name}]`, () => {
    let opened: OpenedTestStore;
    const plants: PlantRecord[] = [
      ...Array.from({ length: 5000 }, (_, i): PlantRecord => ({ id: BigInt(i + 1), name: `Monstera filler ${i}` })),
      ...Array.from({ length: 30 }, (_, i): PlantRecord => ({
        id: BigInt(10_000 + i),
        name: `Zebra monsterx ${i}`,
        tag: 'rare',
      })),
    ];
    before(async () => {
      opened = await backend.open();
      const running = await opened.store.plants.beginImport();
      await running.stage(importRows(plants));
      assert.equal((await running.apply('all', 10)).kind, 'applied');
    });
    after(() => opened?.cleanup());

    it('finds exactly the rare ones, page by page, in every order; counts them', async () => {
      for (const filter of [
        { terms: ['monsterx'] },
        { tags: ['rare'] },
        { terms: ['monst', 'zebra'] },
        { terms: ['monsterx'], tags: ['rare'] },
      ]) {
        for (const order of ORDERS) {
          const query: ListPlantsQuery = { limit: 7, order, ...filter };
          assert.deepEqual(
            (await walk(opened.store, query)).plants,
            expected(plants, order, filter),
            describeQuery(query),
          );
        }
        assert.deepEqual(
          await opened.store.plants.countPlants(filter, 'exact'),
          { count: 30, exact: true },
          describeQuery(filter),
        );
      }
    });
  });
