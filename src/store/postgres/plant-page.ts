/**
 * A page of plants as the API's JSON, built by PostgreSQL (see PlantPage in
 * ../types.ts): one statement returns the JSON array, the page's last id and
 * whether a later plant exists, so a page is one round trip and no row becomes a
 * JS value.
 *
 * Each object is put together from to_json(text), which escapes a string as JSON,
 * and int8's own decimal text, which is exact: the same compact bytes the SQLite
 * store writes (json_build_object would add spaces around every colon). The
 * aggregate carries its own ORDER BY: PostgreSQL does not promise to keep a
 * subquery's order through one.
 */
import type { ListPlantsQuery, PlantPage } from '../types.js';

const PLANT_JSON = `'{"id":' || id || ',"name":' || to_json(name) || coalesce(',"tag":' || to_json(tag), '') || '}'`;

/**
 * $1 is the limit; `filter` selects the page, `laterFilter` a plant after its last id.
 * Whether one exists is asked as min(id), which PostgreSQL answers from the first
 * index entry; written as EXISTS, the planner chose a sequential scan that reads every
 * row before the cursor (5x slower on the bench's pages of a 10,000-plant table).
 */
function pageSql(filter: string, laterFilter: string): string {
  return `
    SELECT body, last, n = $1 AND (SELECT min(id) FROM plants WHERE ${laterFilter}) IS NOT NULL AS more
    FROM (
      SELECT '[' || coalesce(string_agg(${PLANT_JSON}, ',' ORDER BY id), '') || ']' AS body,
             max(id) AS last, count(*) AS n
      FROM (SELECT id, name, tag FROM plants ${filter} ORDER BY id LIMIT $1) AS page
    ) AS aggregated`;
}

const PAGE_FIRST = { name: 'plants.page', text: pageSql('', 'id > last') };
const PAGE_AFTER = { name: 'plants.page-after', text: pageSql('WHERE id > $2', 'id > last') };
const PAGE_TAG_FIRST = { name: 'plants.page-tag', text: pageSql('WHERE tag = $2', 'tag = $2 AND id > last') };
const PAGE_TAG_AFTER = { name: 'plants.page-tag-after', text: pageSql('WHERE tag = $2 AND id > $3', 'tag = $2 AND id > last') };

export interface PageRow {
  readonly body: string;
  /** int8, parsed to bigint by the pool's type parser; null on an empty page. */
  readonly last: bigint | null;
  readonly more: boolean;
}

/** The named statement and values for a page query. Ids travel as decimal text. */
export function pageStatement({ limit, after, tag }: ListPlantsQuery): { name: string; text: string; values: unknown[] } {
  if (tag === undefined) {
    return after === undefined ? { ...PAGE_FIRST, values: [limit] } : { ...PAGE_AFTER, values: [limit, after.toString()] };
  }
  return after === undefined
    ? { ...PAGE_TAG_FIRST, values: [limit, tag] }
    : { ...PAGE_TAG_AFTER, values: [limit, tag, after.toString()] };
}

export function toPage(row: PageRow): PlantPage {
  return { json: row.body, lastId: row.last ?? undefined, hasMore: row.more };
}
