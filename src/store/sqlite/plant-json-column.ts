/**
 * The plants table's json column (migration 0005: the plant's JSON, written by SQLite with every row) follows
 * the plant's definition: its expression is plantJsonSql's. A numbered migration cannot take it from today's
 * definition (it may name columns added later), and SQLite cannot change a generated column in place, so once
 * every migration has run the table is rebuilt here when its expression differs: a new field takes only a
 * migration adding its column (`ALTER TABLE plants ADD COLUMN color TEXT`). Its data is copied as it is; the
 * table's indexes are made again from their own statements. The PostgreSQL store builds the JSON in its
 * statements (routines.ts for its triggers) and has nothing of the kind.
 */
import type Database from 'better-sqlite3';
import { plantJsonSql } from '../../domain/plant-json.js';

/** The json column's definition as the table's CREATE statement holds it. */
export const PLANT_JSON_COLUMN = `GENERATED ALWAYS AS (\n    ${plantJsonSql('sqlite')}\n  ) STORED`;

const GENERATED_JSON = /GENERATED ALWAYS AS \(\n[\s\S]*?\n {2}\) STORED/;
const TABLE_NAME = /^CREATE TABLE (?:"plants"|plants) \(/;

/**
 * Rebuilds the plants table, in the caller's transaction, when its json column is not the definition's;
 * returns whether it did. An up-to-date store is only read.
 */
export function applyPlantJsonColumn(db: Database.Database): boolean {
  const table = db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'plants'").pluck().get();
  if (typeof table !== 'string' || table.includes(PLANT_JSON_COLUMN)) return false;
  if (!GENERATED_JSON.test(table) || !TABLE_NAME.test(table))
    throw new Error(`the plants table is not one the migrations made: ${table.slice(0, 200)}`);
  const rebuilt = table.replace(TABLE_NAME, 'CREATE TABLE plants_rebuilt (').replace(GENERATED_JSON, PLANT_JSON_COLUMN);
  const stored = (
    db.prepare("SELECT name FROM pragma_table_xinfo('plants') WHERE hidden = 0 ORDER BY cid").pluck().all() as string[]
  ).join(', ');
  const dependents = db
    .prepare(
      "SELECT sql FROM sqlite_schema WHERE tbl_name = 'plants' AND type IN ('index', 'trigger') AND sql IS NOT NULL",
    )
    .pluck()
    .all() as string[];
  db.exec(rebuilt);
  db.exec(`INSERT INTO plants_rebuilt (${stored}) SELECT ${stored} FROM plants ORDER BY id`);
  db.exec('DROP TABLE plants');
  db.exec('ALTER TABLE plants_rebuilt RENAME TO plants');
  for (const sql of dependents) db.exec(sql);
  return true;
}
