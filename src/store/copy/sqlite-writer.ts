/**
 * Writing a copy's rows into SQLite: one prepared INSERT per table, run row by row inside the target's one
 * transaction (the commit is what costs). The search index and the change log's plant.created entries are
 * built from the copied rows in finish(), one statement each; subscriptions and deliveries get their rowid
 * from the row's seq, so lists keep their order.
 */
import type Database from 'better-sqlite3';
import { PLANT_CREATED, PLANT_DELETED } from '../../domain/events.js';
import { deletedPlantJsonSql } from '../../domain/plant-json.js';
import { APPEND_CHANGES } from '../sqlite/change-log-writes.js';
import {
  CLEAR_ORDER,
  columnsOf,
  insertedColumns,
  replaceClause,
  sqliteColumn,
  rowValues,
  type ColumnKind,
} from './columns.js';
import type { CopyRows, CopyTable } from './rows.js';

/** Each kind in SQLite's form. */
const TO_SQLITE: Readonly<Record<ColumnKind, (value: never) => unknown>> = {
  text: (value: string) => value,
  int8: (value: bigint) => value,
  int4: (value: number) => value,
  time: (value: number) => value,
  bool: (value: boolean) => (value ? 1 : 0),
  list: (value: readonly string[]) => value.join(','),
};

/** The table's INSERT: its columns (`seq` as the rowid, so lists keep their order), then the derived ones. */
function insertSql(table: CopyTable): string {
  const columns = columnsOf(table);
  const names = insertedColumns(table, columns).map(sqliteColumn);
  const parameters = names.map(() => '?').join(', ');
  return `INSERT INTO ${table} (${names.join(', ')}) VALUES (${parameters})${replaceClause(table, columns)}`;
}

export class SqliteCopyWriter {
  private readonly statements = new Map<CopyTable, Database.Statement>();

  constructor(private readonly db: Database.Database) {}

  insert<T extends CopyTable>(table: T, rows: readonly CopyRows[T][]): void {
    let statement = this.statements.get(table);
    if (statement === undefined) {
      statement = this.db.prepare(insertSql(table));
      this.statements.set(table, statement);
    }
    const columns = columnsOf(table);
    for (const row of rows) statement.run(rowValues(table, columns, row, TO_SQLITE));
  }

  /**
   * The plants it deletes go into the change log as deleted, as a DELETE of each would have them
   * (their payload the id alone, as domain/events.ts writes it). The search index is left as it is:
   * finish() rebuilds it, in the same transaction.
   */
  clear(): void {
    this.db
      .prepare(
        `${APPEND_CHANGES} SELECT '${PLANT_DELETED}', id, tag, ${deletedPlantJsonSql()}, ? FROM plants ORDER BY id`,
      )
      .run(Date.now());
    for (const table of CLEAR_ORDER) this.db.prepare(`DELETE FROM ${table}`).run();
  }

  /**
   * The search index and the change log's entries for the plants as copied (and only them),
   * and the log's history anew (migration 0012: the store now holds another store's plants,
   * and a stream client's position from before must not resume in it). Call it once, after the last plant.
   */
  finish(): void {
    this.db.prepare("INSERT INTO plants_search (plants_search) VALUES ('rebuild')").run();
    this.db
      .prepare(`${APPEND_CHANGES} SELECT '${PLANT_CREATED}', id, tag, json, ? FROM plants ORDER BY id`)
      .run(Date.now());
    this.db.prepare('UPDATE change_log_history SET history = lower(hex(randomblob(8)))').run();
  }

  raiseVersionCounter(last: bigint): void {
    this.db.prepare('UPDATE plant_version_counter SET last = max(last, ?)').run(last);
  }
}
