/**
 * Writing a copy's rows into PostgreSQL: one INSERT .. SELECT FROM unnest(...) per chunk and table, int8 and
 * times as text (exact). Lists travel comma-joined and are split by the statement: unnest cannot yield an
 * array per row. Identity columns are written as they were (OVERRIDING SYSTEM VALUE), and finish() moves
 * their sequences past them.
 */
import type pg from 'pg';
import {
  CLEAR_ORDER,
  columnsOf,
  COPY_COLUMNS,
  insertedColumns,
  replaceClause,
  rowValues,
  type ColumnKind,
} from './columns.js';
import { COPY_TABLES, type CopyRows, type CopyTable } from './rows.js';

/** Each kind as sent: int8 as decimal text and times as ISO text (exact), lists comma-joined. */
const TO_POSTGRES: Readonly<Record<ColumnKind, (value: never) => unknown>> = {
  text: (value: string) => value,
  int8: (value: bigint) => value.toString(),
  int4: (value: number) => value,
  time: (value: number) => new Date(value).toISOString(),
  bool: (value: boolean) => value,
  list: (value: readonly string[]) => value.join(','),
};

/** Each kind's type in the unnest arrays (a list travels as text: unnest cannot yield an array per row). */
const ARRAY_TYPES: Readonly<Record<ColumnKind, string>> = {
  text: 'text',
  int8: 'int8',
  int4: 'int4',
  time: 'timestamptz',
  bool: 'bool',
  list: 'text',
};

/** `INSERT INTO t (...) SELECT ... FROM unnest($1::type[], ...) AS r(...)`, lists split back by the statement. */
function insertSql(table: CopyTable): string {
  const columns = columnsOf(table);
  const derived = COPY_COLUMNS[table].derived?.columns ?? [];
  const names = insertedColumns(table, columns);
  const types = [...columns.map(({ kind }) => ARRAY_TYPES[kind]), ...derived.map(() => 'text')];
  const selected = [
    ...columns.map(({ column, kind }) => (kind === 'list' ? `string_to_array(${column}, ',')` : column)),
    ...derived,
  ];
  const arrays = types.map((type, i) => `$${i + 1}::${type}[]`).join(', ');
  const overriding = COPY_COLUMNS[table].identity === undefined ? '' : ' OVERRIDING SYSTEM VALUE';
  return (
    `INSERT INTO ${table} (${names.join(', ')})${overriding} ` +
    `SELECT ${selected.join(', ')} FROM unnest(${arrays}) AS r(${names.join(', ')})${replaceClause(table, columns)}`
  );
}

/** The identity columns the copy writes, whose sequences must then hand out higher values. */
const IDENTITIES = COPY_TABLES.flatMap((table) => {
  const { identity } = COPY_COLUMNS[table];
  return identity === undefined ? [] : [[table, identity] as const];
});

export class PostgresCopyWriter {
  constructor(private readonly client: pg.Client) {}

  async insert<T extends CopyTable>(table: T, rows: readonly CopyRows[T][]): Promise<void> {
    if (rows.length === 0) return;
    const columns = columnsOf(table);
    const arrays: unknown[][] = [];
    for (const row of rows)
      rowValues(table, columns, row, TO_POSTGRES).forEach((cell, i) => (arrays[i] ??= []).push(cell));
    await this.client.query(insertSql(table), arrays);
  }

  /**
   * DELETE, not TRUNCATE: TRUNCATE waits for every transaction that has read the
   * table, including a source snapshot on the same database, and empties the table
   * for snapshots taken before it too.
   */
  async clear(): Promise<void> {
    for (const table of CLEAR_ORDER) await this.client.query(`DELETE FROM ${table}`);
  }

  /**
   * setval is not transactional: a copy that rolls back leaves the counter raised,
   * which costs nothing (versions need only be new, not consecutive).
   */
  async raiseVersionCounter(last: bigint): Promise<void> {
    await this.client.query(
      "SELECT setval('plant_versions', greatest($1::int8, 1, pg_sequence_last_value('plant_versions')))",
      [last.toString()],
    );
  }

  /**
   * The change log's history anew (migration 0012): the store now holds another store's
   * plants, and a stream client's position from before must not resume in it.
   */
  async renewChangeLogHistory(): Promise<void> {
    await this.client.query('UPDATE plant_change_history SET history = md5(random()::text || clock_timestamp()::text)');
  }

  /**
   * Fresh planner statistics for the copied plants: autovacuum would take its time, and until then the
   * planner's row estimate (what `Prefer: count=estimated` answers) guesses from the table's pages. After
   * the commit, so that ANALYZE reads committed rows and holds no lock of the copy's.
   */
  async analyzePlants(): Promise<void> {
    await this.client.query('ANALYZE plants');
  }

  /** Each identity's sequence past the highest value copied (and never back: greatest keeps a higher one). */
  async moveIdentitiesPastCopiedRows(): Promise<void> {
    for (const [table, column] of IDENTITIES) {
      await this.client.query(
        `SELECT setval(s.sequence, greatest((SELECT max(${column}) FROM ${table}), pg_sequence_last_value(s.sequence)))
         FROM (SELECT pg_get_serial_sequence($1, $2)::regclass AS sequence) s`,
        [table, column],
      );
    }
  }
}
