/**
 * Reading a PostgreSQL store's rows for a copy, in keyset chunks by primary key. int8 is parsed to bigint
 * (clientConfig), so ids, versions and seqs are exact; timestamptz comes as a Date (milliseconds); each column is
 * converted by its kind (columns.ts).
 */
import type pg from 'pg';
import { columnsOf, COPY_COLUMNS, rowFrom, type ColumnKind } from './columns.js';
import type { CopyReader } from './endpoint.js';
import type { CopyRows, CopyTable, RowKey } from './rows.js';

/** Each kind from the type the connection parses it to. */
const FROM_POSTGRES: Readonly<Record<ColumnKind, (value: unknown) => unknown>> = {
  text: (value) => value,
  int8: (value) => value,
  int4: (value) => value,
  time: (value) => (value as Date).getTime(),
  bool: (value) => value,
  list: (value) => value,
};

/** A key as a parameter: int8 keys as decimal text (exact), text keys as they are. */
const parameter = (key: RowKey): string => key.toString();

export class PostgresCopyReader implements CopyReader {
  readonly kind = 'postgres';

  constructor(
    protected readonly client: pg.Client,
    readonly label: string,
  ) {}

  async read<T extends CopyTable>(table: T, after: RowKey | undefined, limit: number): Promise<CopyRows[T][]> {
    const { key } = COPY_COLUMNS[table];
    const columns = columnsOf(table);
    // The key is compared in its own column's type (int8 or text), so the primary key's index serves the range.
    const where = after === undefined ? '' : `WHERE ${key} > $2::${typeof after === 'bigint' ? 'int8' : 'text'}`;
    const { rows } = await this.client.query(
      `SELECT ${columns.map(({ column }) => column).join(', ')} FROM ${table} ${where} ORDER BY ${key} LIMIT $1`,
      after === undefined ? [limit] : [limit, parameter(after)],
    );
    return rows.map((raw) => rowFrom(columns, raw, FROM_POSTGRES) as unknown as CopyRows[T]);
  }

  async count(table: CopyTable): Promise<number> {
    return this.number(`SELECT count(*) AS value FROM ${table}`);
  }

  async pendingDeliveries(): Promise<number> {
    return this.number("SELECT count(*) AS value FROM webhook_deliveries WHERE status = 'pending'");
  }

  /** A sequence not yet used (is_called false) hands out last_value next. Not transactional: the value now, not the
   * snapshot's. */
  async versionCounter(): Promise<bigint> {
    const { rows } = await this.client.query<{ value: bigint }>(
      'SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END AS value FROM plant_versions',
    );
    return rows[0]?.value ?? 0n;
  }

  private async number(sql: string): Promise<number> {
    const { rows } = await this.client.query<{ value: bigint | number }>(sql);
    return Number(rows[0]?.value ?? 0);
  }
}
