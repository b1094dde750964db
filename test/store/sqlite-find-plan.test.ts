/**
 * The SQLite finder's statements (src/store/sqlite/plant-find.ts) must walk an index
 * from the cursor on, never sorting the table: name orders plants_name_key, a search
 * in id order the FTS5 index in rowid order, counts by tag a covering index.
 * EXPLAIN QUERY PLAN shows each.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { countStatement, pageStatement, type FindStatement } from '../../src/store/sqlite/plant-find.js';
import { registerUnlimitedBudget } from '../../src/store/sqlite/read-budget.js';
import type { ListPlantsQuery } from '../../src/store/types.js';
import { sqliteBackend, type OpenedTestStore } from '../support/backends.js';

describe('SQLite find query plans', () => {
  let opened: OpenedTestStore;
  let db: Database.Database;
  before(async () => {
    opened = await sqliteBackend.open();
    db = new Database(opened.databaseUrl.replace(/^sqlite:/, ''), { readonly: true });
    registerUnlimitedBudget(db);
  });
  after(async () => {
    db?.close();
    await opened?.cleanup();
  });

  const plan = ({ sql, parameters }: FindStatement): string =>
    (db.prepare(`EXPLAIN QUERY PLAN ${sql()}`).all(parameters) as { detail: string }[])
      .map((row) => row.detail)
      .join(' | ');

  const pages: [ListPlantsQuery, RegExp][] = [
    [{ limit: 100 }, /^SCAN plants$/],
    [{ limit: 100, order: '-id', after: 5n }, /^SEARCH plants USING INTEGER PRIMARY KEY \(rowid<\?\)$/],
    [{ limit: 100, order: 'name' }, /^SCAN plants USING INDEX plants_name_key$/],
    [
      { limit: 100, order: 'name', after: 5n, afterKey: 'monstera' },
      /^SEARCH plants USING INDEX plants_name_key \(name_key>\?\)$/,
    ],
    [
      { limit: 100, order: '-name', after: 5n, afterKey: 'monstera' },
      /^SEARCH plants USING INDEX plants_name_key \(name_key<\?\)$/,
    ],
    [{ limit: 100, tags: ['fern'], after: 5n }, /^SEARCH plants USING INDEX plants_tag_id \(tag=\? AND id>\?\)$/],
    [
      { limit: 100, terms: ['mon'], after: 5n },
      /^SCAN plants_search VIRTUAL TABLE INDEX \d+:M\d*> \| SEARCH plants USING INTEGER PRIMARY KEY \(rowid=\?\)$/,
    ],
    [
      { limit: 100, terms: ['mon'], order: '-id' },
      /^SCAN plants_search VIRTUAL TABLE INDEX \d+:M\d* \| SEARCH plants USING INTEGER PRIMARY KEY \(rowid=\?\)$/,
    ],
  ];
  for (const [query, expected] of pages) {
    it(`pages without sorting: ${JSON.stringify(query, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`, () => {
      const detail = plan(pageStatement(query));
      assert.match(detail, expected);
      assert.doesNotMatch(detail, /TEMP B-TREE/);
    });
  }

  it("a search's walk reads a bounded window of an index in the page's order, never the table", () => {
    // The outer SCAN is of the co-routine: the window's rows (LIMIT @window), not the table.
    assert.match(
      plan(pageStatement({ limit: 1, terms: ['monstera'], order: 'name' }, 'walk')),
      /^CO-ROUTINE plants \| SCAN plants USING INDEX plants_name_key \| SCAN plants$/,
    );
    assert.match(
      plan(pageStatement({ limit: 1, tags: ['office'], order: 'name' }, 'walk')),
      /^CO-ROUTINE plants \| SCAN plants USING INDEX plants_name_key \| SCAN plants$/,
    );
    assert.match(
      plan(pageStatement({ limit: 1, terms: ['monsterx'] }, 'walk')),
      /^CO-ROUTINE found \| SCAN plants_search VIRTUAL TABLE INDEX \d+:M\d* \| SCAN found \| SEARCH plants USING INTEGER PRIMARY KEY \(rowid=\?\)$/,
    );
    // The exact search asks each whole term of the search index, and sorts only its matches.
    assert.match(
      plan(pageStatement({ limit: 1, terms: ['monsterx'], order: 'name' }, 'exact')),
      /LIST SUBQUERY|plants_search/,
    );
  });

  it('counts a tag from its covering index, and a search from the FTS5 index', () => {
    assert.match(
      plan(countStatement({ tags: ['fern'] })),
      /^SEARCH plants USING COVERING INDEX plants_tag_id \(tag=\?\)$/,
    );
    assert.match(plan(countStatement({ terms: ['mon'] })), /SCAN plants_search VIRTUAL TABLE/);
  });
});
