/**
 * Rows sent to PostgreSQL as one array parameter per column and unnested back into
 * rows (one statement for a whole batch). The columns are named once, with their
 * types; the SQL and the values both follow that list, so no statement numbers its
 * parameters, or orders its values, by hand.
 */
export type ColumnTypes<Row> = { readonly [K in keyof Row & string]: string };

export class ArrayInput<Row extends object> {
  private readonly keys: readonly (keyof Row & string)[];

  /** `first`: the number of the first array's parameter ($1 unless others come before). */
  constructor(
    private readonly types: ColumnTypes<Row>,
    private readonly first = 1,
  ) {
    this.keys = Object.keys(types) as (keyof Row & string)[];
  }

  /** The columns' names, in order (for a plant: PLANT_KEYS). */
  columns(): string {
    return this.keys.join(', ');
  }

  /** The columns as a table's definitions: `id int8 NOT NULL, tag text, ...`; `nullable` names those that may be NULL.
   * */
  definitions(nullable: ReadonlySet<string>): string {
    return this.keys.map((key) => `${key} ${this.types[key]}${nullable.has(key) ? '' : ' NOT NULL'}`).join(', ');
  }

  /** `unnest($1::int8[], $2::text[], ...) AS alias(id, name, ...)`. */
  unnest(alias: string): string {
    const arrays = this.keys.map((key, i) => `$${this.first + i}::${this.types[key]}[]`).join(', ');
    return `unnest(${arrays}) AS ${alias}(${this.columns()})`;
  }

  /** The parameter `after` places past the arrays: `$n` of the statement's next value. */
  parameter(after = 0): string {
    return `$${this.first + this.keys.length + after}`;
  }

  /** The arrays' values, one array per column, in the columns' order. */
  values(rows: readonly Row[]): unknown[][] {
    return this.keys.map((key) => rows.map((row) => row[key]));
  }
}
