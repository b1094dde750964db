/**
 * A page of plants as the API's JSON (see PlantPage in ../types.ts), with the
 * objects written by PostgreSQL: each row comes back as its own JSON text, so no
 * row becomes a JS object, and the page is those texts joined.
 *
 * Each object is put together from to_json(text), which escapes a string as JSON,
 * and int8's own decimal text, which is exact: the same compact bytes the SQLite
 * store writes (json_build_object would add spaces around every colon).
 *
 * One row more than the page is asked for: its presence says whether a later page
 * exists. The rows are joined here rather than by string_agg: an aggregate's
 * ORDER BY made PostgreSQL 15 sort the rows again (about a third of the statement's
 * time), and without one the order of an aggregate's input is not promised.
 */
import type { ListPlantsQuery, PlantPage } from '../types.js';

const PLANT_JSON = `'{"id":' || id || ',"name":' || to_json(name) || coalesce(',"tag":' || to_json(tag), '') || '}'`;

/**
 * $1 is the number of rows to return (the limit plus one). The JSON is built above
 * the LIMIT: built in the scan, its cost made the planner prefer reading the whole
 * table and sorting it. The outer ORDER BY costs no sort (the planner knows the
 * subquery's rows come in id order) and makes that order promised, not incidental.
 */
function pageSql(filter: string): string {
  // page.id, qualified: a bare `id` in ORDER BY would name the output column id::text
  // and sort the ids as text.
  return `SELECT ${PLANT_JSON} AS json, id::text AS id_text FROM (SELECT id, name, tag FROM plants ${filter} ORDER BY id LIMIT $1) AS page ORDER BY page.id`;
}

// rowMode 'array': each row is a [json, id] pair, not an object with named keys.
const PAGE_FIRST = { name: 'plants.page', text: pageSql(''), rowMode: 'array' } as const;
const PAGE_AFTER = { name: 'plants.page-after', text: pageSql('WHERE id > $2'), rowMode: 'array' } as const;
const PAGE_TAG_FIRST = { name: 'plants.page-tag', text: pageSql('WHERE tag = $2'), rowMode: 'array' } as const;
const PAGE_TAG_AFTER = { name: 'plants.page-tag-after', text: pageSql('WHERE tag = $2 AND id > $3'), rowMode: 'array' } as const;

/** A plant's JSON and its id (as decimal text: only the last one is ever parsed). */
export type PageRow = [json: string, id: string];

/** The named statement and values for a page query. Ids travel as decimal text. */
export function pageStatement({ limit, after, tag }: ListPlantsQuery): { name: string; text: string; rowMode: 'array'; values: unknown[] } {
  const rows = limit + 1;
  if (tag === undefined) {
    return after === undefined ? { ...PAGE_FIRST, values: [rows] } : { ...PAGE_AFTER, values: [rows, after.toString()] };
  }
  return after === undefined
    ? { ...PAGE_TAG_FIRST, values: [rows, tag] }
    : { ...PAGE_TAG_AFTER, values: [rows, tag, after.toString()] };
}

export function toPage(rows: readonly PageRow[], limit: number): PlantPage {
  const hasMore = rows.length > limit;
  const count = hasMore ? limit : rows.length;
  let json = '[';
  for (let i = 0; i < count; i++) json += (i === 0 ? '' : ',') + (rows[i] as PageRow)[0];
  const last = count === 0 ? undefined : BigInt((rows[count - 1] as PageRow)[1]);
  return { json: json + ']', lastId: last, hasMore };
}
