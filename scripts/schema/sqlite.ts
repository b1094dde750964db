/**
 * The SQLite store's schema as SQL text, read from sqlite_master of a freshly migrated
 * file: tables, indexes, triggers and views, in a stable order.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { openConnection } from '../../src/store/sqlite/connection.js';
import { migrate } from '../../src/store/sqlite/sqlite-store.js';
import { addedColumnsOnTheirOwnLines, statement } from './text.js';

interface SchemaRow {
  readonly type: string;
  readonly name: string;
  readonly tbl_name: string;
  readonly sql: string;
}

const TYPE_ORDER = ['table', 'view', 'index', 'trigger'];

/** Every object with SQL text, leaving out SQLite's own and the tables FTS5 keeps behind a virtual table. */
export function dumpSqliteSchema(db: Database.Database): string {
  const shadowQuery = "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'shadow'";
  const shadow = new Set(db.prepare(shadowQuery).pluck().all() as string[]);
  const all = db
    .prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'")
    .all() as SchemaRow[];
  const rows = all.filter((row) => !shadow.has(row.name) && !shadow.has(row.tbl_name));
  // Tables and views by name; indexes and triggers by their table, then by name.
  const owner = (row: SchemaRow) => (row.type === 'index' || row.type === 'trigger' ? row.tbl_name : '');
  const rank = (row: SchemaRow) => TYPE_ORDER.indexOf(row.type);
  rows.sort((a, b) => rank(a) - rank(b) || compare(owner(a), owner(b)) || compare(a.name, b.name));
  const text = (row: SchemaRow) => statement(row.type === 'table' ? addedColumnsOnTheirOwnLines(row.sql) : row.sql);
  return rows.map(text).join('\n\n');
}

/** The schema of a new store file migrated to the latest version. */
export function freshSqliteSchema(): string {
  const dir = mkdtempSync(join(tmpdir(), 'plantstore-schema-'));
  try {
    const db = openConnection(join(dir, 'plantstore.db'), 5000);
    try {
      migrate(db);
      return dumpSqliteSchema(db);
    } finally {
      db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
