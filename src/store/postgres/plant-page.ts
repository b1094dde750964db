/**
 * A page of plants as the API's JSON, written by PostgreSQL and sent back as ONE row (the page's JSON, its
 * last id, whether a later plant exists), so the driver does not parse a row per plant (bench/README.md,
 * "Figures behind code comments").
 *
 * Objects are built from to_json(text) and int8's exact decimal text: the same compact bytes as SQLite's
 * (json_build_object adds spaces). They are collected with ARRAY(subquery), which keeps the ORDER BY:
 * string_agg's own ORDER BY sorted again, and an aggregate's input order is not promised otherwise. One row
 * more than the page says whether a later page exists (an EXISTS probe made the planner scan the table;
 * see plant-page-plan.test.ts).
 */
import { plantJsonSql } from '../../domain/plant-json.js';
import { plantColumnsSql } from '../../domain/plant-sql.js';
import { wordsColumnsSql } from '../../domain/plant-find-sql.js';
import { isNameOrder } from '../plant-order.js';
import type { ListPlantsQuery, PlantFilter, PlantOrder, PlantPage } from '../types.js';

const PLANT_JSON = plantJsonSql('postgres');

const ORDER_BY: Readonly<Record<PlantOrder, string>> = {
  id: 'id',
  '-id': 'id DESC',
  name: 'name_key, id',
  '-name': 'name_key DESC, id DESC',
};

/** A statement under construction: its conditions and values, numbering parameters as they are added. */
class Conditions {
  readonly conditions: string[] = [];
  readonly shape: string[] = [];

  constructor(readonly values: unknown[]) {}

  /** `$n` for the next value. */
  parameter(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  add(shape: string, condition: string): void {
    this.shape.push(shape);
    this.conditions.push(condition);
  }

  where(): string {
    return this.conditions.length === 0 ? '' : `WHERE ${this.conditions.join(' AND ')}`;
  }
}

/** A tsquery of prefix terms ('mon':* & 'delic':*), taken as is: terms hold only letters and digits. */
function tsquery(terms: readonly string[]): string {
  return terms.map((term) => `'${term}':*`).join(' & ');
}

function addFilter(statement: Conditions, { tags, terms }: PlantFilter): void {
  if (tags !== undefined && tags.length > 0) {
    // One tag as `=`: plants_tag_id then yields its plants in id order, with no sort
    // (an = ANY over one element does not, on PostgreSQL 15).
    if (tags.length === 1) statement.add('tag', `tag = ${statement.parameter(tags[0])}`);
    else statement.add('tags', `tag = ANY(${statement.parameter(tags)}::text[])`);
  }
  if (terms !== undefined && terms.length > 0) {
    // plant_search_vector takes a words column per searched field: its index (plants_search) is on that call.
    const vector = `plant_search_vector(${wordsColumnsSql()})`;
    statement.add('q', `${vector} @@ ${statement.parameter(tsquery(terms))}::tsquery`);
  }
}

function addPosition(statement: Conditions, { order = 'id', after, afterKey }: ListPlantsQuery): void {
  if (after === undefined) return;
  const id = `${statement.parameter(after.toString())}::int8`;
  if (!isNameOrder(order)) {
    statement.add('after', `id ${order === 'id' ? '>' : '<'} ${id}`);
    return;
  }
  if (afterKey === undefined) throw new Error(`a page after a plant in ${order} order needs that plant's name key`);
  statement.add('after', `(name_key, id) ${order === 'name' ? '>' : '<'} (${statement.parameter(afterKey)}, ${id})`);
}

/**
 * $1 is the page size; the subquery reads one row more. The JSON is built above the LIMIT (built in the scan,
 * its cost made the planner read and sort the whole table); the outer ORDER BY costs no sort and makes the
 * order promised. OFFSET 0 keeps `fetched` one subquery, else its ARRAY is computed per column using it.
 * The last id is read from the last object's JSON (->> keeps int8's exact digits), and in name orders its name
 * key in the same statement, so the same snapshot.
 * A search's OFFSET 0 makes the planner collect the GIN index's matches first: misled by its estimates for
 * prefix terms, it would walk an ordered index and read the whole table for a rare match.
 */
function pageSql(order: PlantOrder, where: string, searching: boolean): string {
  const pageOrder = ORDER_BY[order].replace(/\b(id|name_key)\b/g, 'page.$1');
  const columns = isNameOrder(order) ? `${plantColumnsSql()}, name_key` : plantColumnsSql();
  const rows = searching ? `(SELECT ${columns} FROM plants ${where} OFFSET 0) AS matched` : `plants ${where}`;
  const objects = `SELECT ${PLANT_JSON} FROM (SELECT ${columns} FROM ${rows} ORDER BY ${ORDER_BY[order]} LIMIT $1::int + 1) AS page ORDER BY ${pageOrder}`;
  const lastKey = isNameOrder(order) ? ', (SELECT name_key FROM plants WHERE id = last_id::int8) AS last_key' : '';
  return `SELECT json, last_id, more${lastKey} FROM (
      SELECT '[' || array_to_string(objects[1:$1::int], ',') || ']' AS json,
        objects[least(cardinality(objects), $1::int)]::json ->> 'id' AS last_id,
        cardinality(objects) > $1::int AS more
      FROM (SELECT ARRAY(${objects}) AS objects OFFSET 0) AS fetched
    ) AS found`;
}

export interface NamedStatement {
  readonly name: string;
  readonly text: string;
  readonly rowMode: 'array';
  readonly values: unknown[];
}

/**
 * The named statement and values for a page query: one prepared statement per
 * shape (order, cursor, one or more tags, search). Ids travel as decimal text.
 */
export function pageStatement(query: ListPlantsQuery): NamedStatement {
  const order = query.order ?? 'id';
  const statement = new Conditions([query.limit]);
  addFilter(statement, query);
  addPosition(statement, query);
  const searching = query.terms !== undefined && query.terms.length > 0;
  return {
    name: `plants.page:${[order, ...statement.shape].join(':')}`,
    text: pageSql(order, statement.where(), searching),
    rowMode: 'array',
    values: statement.values,
  };
}

/** The page's JSON array, its last id (decimal text; null when the page is empty), whether more follow, and in name
 * orders the last name key. */
export type PageRow = [json: string, lastId: string | null, more: boolean, lastKey?: string | null];

export function toPage([json, lastId, more, lastKey]: PageRow): PlantPage {
  return {
    json,
    lastId: lastId === null ? undefined : BigInt(lastId),
    ...(typeof lastKey === 'string' ? { lastKey } : {}),
    hasMore: more,
  };
}

/** A chunk of an export: the next plants in id order, after `after` when given, as named columns. $1: its size. */
export function exportChunkStatement(
  filter: PlantFilter,
  after: bigint | undefined,
  limit: number,
): Omit<NamedStatement, 'rowMode'> {
  const statement = new Conditions([limit]);
  addFilter(statement, filter);
  addPosition(statement, { limit, after });
  return {
    name: `plants.export:${statement.shape.join(':')}`,
    text: `SELECT ${plantColumnsSql()} FROM plants ${statement.where()} ORDER BY id LIMIT $1::int`,
    values: statement.values,
  };
}

/** A statement over the plants a filter keeps: `select` before the FROM, `prefix` before the SELECT. */
function filteredStatement(name: string, filter: PlantFilter, select: string, prefix = ''): NamedStatement {
  const statement = new Conditions([]);
  addFilter(statement, filter);
  return {
    name: `${name}:${statement.shape.join(':')}`,
    text: `${prefix}SELECT ${select} FROM plants ${statement.where()}`,
    rowMode: 'array',
    values: statement.values,
  };
}

/** Counting every matching plant; index-only where the filter allows it. */
export function countStatement(filter: PlantFilter): NamedStatement {
  return filteredStatement('plants.count', filter, 'count(*)');
}

/** The planner's estimate of the same count, from the table's statistics: EXPLAIN, not run. */
export function estimateStatement(filter: PlantFilter): NamedStatement {
  return filteredStatement('plants.estimate', filter, '1', 'EXPLAIN (FORMAT JSON) ');
}

/** The estimated row count out of EXPLAIN's JSON plan. */
export function plannedRows(plan: unknown): number {
  const rows = (plan as [{ Plan?: { 'Plan Rows'?: unknown } }] | undefined)?.[0]?.Plan?.['Plan Rows'];
  if (typeof rows !== 'number') throw new Error('EXPLAIN gave no row estimate');
  return rows;
}
