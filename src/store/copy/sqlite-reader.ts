/**
 * Reading a SQLite store's rows for a copy, in keyset chunks by primary key, so every chunk costs the same
 * and memory holds one. Integers are read as bigint (safeIntegers), so ids and versions are exact; each column
 * is converted by its kind (columns.ts).
 */
import type Database from 'better-sqlite3';
import { columnsOf, COPY_COLUMNS, rowFrom, sqliteColumn, type ColumnKind } from './columns.js';
import type { CopyReader } from './endpoint.js';
import { splitList, type CopyRows, type CopyTable, type RowKey } from './rows.js';

/** Each kind from SQLite's form (integers arrive as bigint). */
const FROM_SQLITE: Readonly<Record<ColumnKind, (value: unknown) => unknown>> = {
  text: (value) => value,
  int8: (value) => value,
  int4: (value) => Number(value),
  time: (value) => Number(value),
  bool: (value) => value !== 0n,
  list: (value) => splitList(value as string),
};

export class SqliteCopyReader implements CopyReader {
  readonly kind = 'sqlite';
  /** Two statements per table (first chunk, chunks after a key), prepared on first use. */
  private readonly statements = new Map<string, Database.Statement>();

  constructor(
    protected readonly db: Database.Database,
    readonly label: string,
  ) {}

  async read<T extends CopyTable>(table: T, after: RowKey | undefined, limit: number): Promise<CopyRows[T][]> {
    const { key } = COPY_COLUMNS[table];
    const columns = columnsOf(table);
    const select = columns.map(({ column }) => `${sqliteColumn(column)} AS ${column}`).join(', ');
    const where = after === undefined ? '' : `WHERE ${key} > ?`;
    const statement = this.statement(`SELECT ${select} FROM ${table} ${where} ORDER BY ${key} LIMIT ?`);
    const raws = (after === undefined ? statement.all(limit) : statement.all(after, limit)) as Record<
      string,
      unknown
    >[];
    return raws.map((raw) => rowFrom(columns, raw, FROM_SQLITE) as unknown as CopyRows[T]);
  }

  async count(table: CopyTable): Promise<number> {
    return Number(this.statement(`SELECT count(*) FROM ${table}`).pluck().get());
  }

  async pendingDeliveries(): Promise<number> {
    return Number(this.statement("SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'").pluck().get());
  }

  async versionCounter(): Promise<bigint> {
    return this.statement('SELECT last FROM plant_version_counter').pluck().get() as bigint;
  }

  protected statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql).safeIntegers(true);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}
