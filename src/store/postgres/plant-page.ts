/**
 * A page of plants as the API's JSON (see PlantPage in ../types.ts), written by
 * PostgreSQL and sent back as ONE row: the page's JSON text, the last id on it, and
 * whether a later plant exists. One row rather than one per plant cut the service's
 * CPU for a page of 100 by about a third (bench/README.md, "Figures behind code
 * comments"): the driver no longer parses 101 rows.
 *
 * Each object is put together from to_json(text), which escapes a string as JSON,
 * and int8's own decimal text, which is exact: the same compact bytes the SQLite
 * store writes (json_build_object would add spaces around every colon).
 *
 * The objects are collected with ARRAY(subquery), which keeps the subquery's ORDER
 * BY, rather than by an aggregate: string_agg's own ORDER BY made PostgreSQL 15 sort
 * the rows again (about a third of the statement's time), and without one the order
 * of an aggregate's input is not promised. One row more than the page is fetched:
 * its presence says whether a later page exists (an EXISTS probe past the last id
 * made the planner read the table sequentially; see plant-page-plan.test.ts).
 */
import type { ListPlantsQuery, PlantPage } from '../types.js';

const PLANT_JSON = `'{"id":' || id || ',"name":' || to_json(name) || coalesce(',"tag":' || to_json(tag), '') || '}'`;

/**
 * $1 is the page size; the subquery reads one row more. The JSON is built above
 * the LIMIT: built in the scan, its cost made the planner prefer reading the whole
 * table and sorting it. The ORDER BY over the subquery costs no sort (the planner
 * knows its rows come in id order) and makes that order promised, not incidental.
 * OFFSET 0 keeps `fetched` one subquery: inlined, its ARRAY would be computed once
 * for each of the three columns that use it.
 *
 * The last id is read back out of the last object's JSON: a json value keeps its
 * number's text, so ->> gives the int8's exact digits.
 */
function pageSql(filter: string): string {
  const objects = `SELECT ${PLANT_JSON} FROM (SELECT id, name, tag FROM plants ${filter} ORDER BY id LIMIT $1::int + 1) AS page ORDER BY page.id`;
  return `SELECT '[' || array_to_string(objects[1:$1::int], ',') || ']' AS json,
      objects[least(cardinality(objects), $1::int)]::json ->> 'id' AS last_id,
      cardinality(objects) > $1::int AS more
    FROM (SELECT ARRAY(${objects}) AS objects OFFSET 0) AS fetched`;
}

// rowMode 'array': the row is a [json, last_id, more] triple, not an object with named keys.
const PAGE_FIRST = { name: 'plants.page', text: pageSql(''), rowMode: 'array' } as const;
const PAGE_AFTER = { name: 'plants.page-after', text: pageSql('WHERE id > $2'), rowMode: 'array' } as const;
const PAGE_TAG_FIRST = { name: 'plants.page-tag', text: pageSql('WHERE tag = $2'), rowMode: 'array' } as const;
const PAGE_TAG_AFTER = { name: 'plants.page-tag-after', text: pageSql('WHERE tag = $2 AND id > $3'), rowMode: 'array' } as const;

/** The page's JSON array, its last id (decimal text; null when the page is empty), and whether more follow. */
export type PageRow = [json: string, lastId: string | null, more: boolean];

/** The named statement and values for a page query. Ids travel as decimal text. */
export function pageStatement({ limit, after, tag }: ListPlantsQuery): { name: string; text: string; rowMode: 'array'; values: unknown[] } {
  if (tag === undefined) {
    return after === undefined ? { ...PAGE_FIRST, values: [limit] } : { ...PAGE_AFTER, values: [limit, after.toString()] };
  }
  return after === undefined
    ? { ...PAGE_TAG_FIRST, values: [limit, tag] }
    : { ...PAGE_TAG_AFTER, values: [limit, tag, after.toString()] };
}

export function toPage([json, lastId, more]: PageRow): PlantPage {
  return { json, lastId: lastId === null ? undefined : BigInt(lastId), hasMore: more };
}
