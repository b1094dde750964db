/**
 * GET /plants on SQLite, read in a reader thread: one statement per query shape, prepared on first use and
 * kept (a few hundred at most). Every order is an index walk from the cursor, never OFFSET, so page 10,000
 * costs what page 1 does.
 *
 * A search, or a tag in name order, has two ways to a page, since which is cheap depends on how many plants
 * match (SqlitePlantFinder.page):
 * - the walk: candidates in the page's order, each checked against terms and tags; cheap when matches are
 *   common, so it reads at most WINDOW candidates;
 * - the exact search: FTS5 (or plants_tag_id) finds exactly the matches, then ordered; it costs what the
 *   matches cost, and is asked when the walk's window did not fill the page.
 * The page is read one row past its end, which says whether more follow.
 */
import type Database from 'better-sqlite3';
import { plantColumnsSql } from '../../domain/plant-sql.js';
import { allWordsSql, wordsColumnsSql } from '../../domain/plant-find-sql.js';
import { isNameOrder } from '../plant-order.js';
import type { ListPlantsQuery, PlantCount, PlantFilter, PlantOrder, PlantPage } from '../types.js';
import { guarded } from './errors.js';
import { WITHIN_READ_BUDGET } from './read-budget.js';

/** Candidates the walk reads at most before the exact search is asked (at least four pages' worth). */
export const WINDOW = 4096;

/** How a page is found (the file's comment); 'direct': the one way of a page an index yields exactly (oneWay). */
export type PagePlan = 'direct' | 'walk' | 'exact';

/**
 * Where the rows come from, and so which id column the order and cursor use. A search in id order is driven by
 * the FTS5 index in rowid order, so a page stops after a page of matches (`id IN (matches)` would collect them
 * all first); in name order the matches are collected and sorted.
 */
interface Source {
  readonly from: string;
  readonly id: string;
  readonly match: string;
}

const PLANTS: Source = {
  from: 'plants',
  id: 'id',
  match: 'id IN (SELECT rowid FROM plants_search WHERE plants_search MATCH @match)',
};
const SEARCH_IN_ID_ORDER: Source = {
  from: 'plants_search JOIN plants ON plants.id = plants_search.rowid',
  id: 'plants_search.rowid',
  match: 'plants_search MATCH @match',
};

function sourceOf(order: PlantOrder, { terms }: PlantFilter): Source {
  return hasTerms(terms) && !isNameOrder(order) ? SEARCH_IN_ID_ORDER : PLANTS;
}

function hasTerms(terms: readonly string[] | undefined): terms is readonly string[] {
  return terms !== undefined && terms.length > 0;
}

function orderBy(order: PlantOrder, { id }: Pick<Source, 'id'>): string {
  switch (order) {
    case 'id':
      return id;
    case '-id':
      return `${id} DESC`;
    case 'name':
      return 'name_key, plants.id';
    case '-name':
      return 'name_key DESC, plants.id DESC';
  }
}

function afterCondition(order: PlantOrder, { id }: Pick<Source, 'id'>): string {
  switch (order) {
    case 'id':
      return `${id} > @after`;
    case '-id':
      return `${id} < @after`;
    case 'name':
      return '(name_key, plants.id) > (@afterKey, @after)';
    case '-name':
      return '(name_key, plants.id) < (@afterKey, @after)';
  }
}

/**
 * FTS5 answers a prefix query by merging the lists of every word with that prefix in memory, so a common
 * prefix reads every entry. The index therefore also keeps each word's first one to five characters
 * (prefix = '1 2 3 4 5', migration 8), read lazily like any word: the walk asks a term as its first five
 * characters at most and checks a longer one against the plant's words, so a page of matches costs a page.
 * Fewer indexed characters let through too many candidates to check (bench/README.md, "Finding plants at a million").
 */
export const INDEXED_PREFIX = 5;

/** The terms longer than the indexed prefix, which the walk checks on each candidate. */
function longTerms(terms: readonly string[] | undefined): string[] {
  return (terms ?? []).filter((term) => Array.from(term).length > INDEXED_PREFIX);
}

/** How a plan matches terms: the FTS5 expression it asks (if any), and the terms it checks on each row. */
interface Matching {
  readonly match: string | undefined;
  readonly checked: readonly string[];
}

function matchingOf(plan: PagePlan, order: PlantOrder, terms: readonly string[] | undefined): Matching {
  if (!hasTerms(terms)) return { match: undefined, checked: [] };
  if (plan === 'exact') return { match: matchExpression(terms, Number.POSITIVE_INFINITY), checked: [] };
  // The walk in name order reads plants_name_key, not the search index: every term is checked on the row.
  if (plan === 'walk' && isNameOrder(order)) return { match: undefined, checked: terms };
  return { match: matchExpression(terms, INDEXED_PREFIX), checked: longTerms(terms) };
}

/**
 * An FTS5 query: every term (cut to `length` characters) as a prefix ("mon"*), all
 * of them required. Terms hold only letters and digits.
 */
function matchExpression(terms: readonly string[], length: number): string {
  return terms.map((term) => `"${Array.from(term).slice(0, length).join('')}"*`).join(' AND ');
}

function tagCondition(tags: readonly string[] | undefined): string[] {
  if (tags === undefined || tags.length === 0) return [];
  return [tags.length === 1 ? 'tag = @tag0' : `tag IN (${tags.map((_, i) => `@tag${i}`).join(', ')})`];
}

function checkConditions({ checked }: Matching): string[] {
  return checked.map((_, i) => `instr(' ' || ${allWordsSql('plants')}, ' ' || @term${i}) > 0`);
}

function filterConditions({ tags }: PlantFilter, source: Source, matching: Matching): string[] {
  return [...tagCondition(tags), ...(matching.match === undefined ? [] : [source.match]), ...checkConditions(matching)];
}

/** A page's order and size: one row past the page. */
function ordered(order: PlantOrder, source: Pick<Source, 'id'>): string {
  return `ORDER BY ${orderBy(order, source)} LIMIT @limit`;
}

function where(conditions: readonly string[]): string {
  return conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
}

/** The named parameters of a filter. */
function filterParameters({ tags }: PlantFilter, { match, checked }: Matching): Record<string, unknown> {
  const parameters: Record<string, unknown> = {};
  tags?.forEach((tag, i) => (parameters[`tag${i}`] = tag));
  if (match !== undefined) parameters.match = match;
  checked.forEach((term, i) => (parameters[`term${i}`] = term));
  return parameters;
}

function shapeOf({ tags }: PlantFilter, { match, checked }: Matching): string {
  return `${tags?.length ?? 0}:${match !== undefined}:${checked.length}`;
}

/** A statement of the finder: its cache key, its text (built only when not cached) and its named parameters. */
export interface FindStatement {
  readonly key: string;
  readonly sql: () => string;
  readonly parameters: Record<string, unknown>;
}

/**
 * The page query of a plan: one row past the page, [json, id] each, and the name key only in name orders (it
 * costs id-ordered pages noticeably). Each statement asks the read's time budget per row (read-budget.ts).
 */
export function pageStatement(query: ListPlantsQuery, plan: PagePlan = 'direct'): FindStatement {
  const order = query.order ?? 'id';
  const matching = matchingOf(plan, order, query.terms);
  const parameters: Record<string, unknown> = { ...filterParameters(query, matching), limit: query.limit + 1 };
  if (query.after !== undefined) {
    parameters.after = query.after;
    if (isNameOrder(order)) parameters.afterKey = requiredKey(query);
  }
  const columns = `plants.json, plants.id${isNameOrder(order) ? ', plants.name_key' : ''}`;
  const key = `page:${plan}:${order}:${query.after !== undefined}:${shapeOf(query, matching)}`;
  if (plan === 'walk') {
    parameters.window = Math.max(WINDOW, 4 * (query.limit + 1));
    const { from, source } = walkSource(order, query.after !== undefined);
    const conditions = [WITHIN_READ_BUDGET, ...tagCondition(query.tags), ...checkConditions(matching)];
    const sql = () => `SELECT ${columns} FROM ${from} ${where(conditions)} ${ordered(order, source)}`;
    return { key, sql, parameters };
  }
  const source = sourceOf(order, query);
  const conditions = [WITHIN_READ_BUDGET, ...filterConditions(query, source, matching)];
  if (query.after !== undefined) conditions.push(afterCondition(order, source));
  const sql = () => `SELECT ${columns} FROM ${source.from} ${where(conditions)} ${ordered(order, source)}`;
  return { key, sql, parameters };
}

/**
 * The walk's rows: at most @window candidates from the cursor on, in the page's
 * order: the search index's prefix entries in id order, or plants_name_key's
 * entries in name order.
 */
function walkSource(order: PlantOrder, after: boolean): { from: string; source: Pick<Source, 'id'> } {
  if (isNameOrder(order)) {
    const within = after ? `WHERE ${afterCondition(order, PLANTS)}` : '';
    const columns = `plants.id, json, name_key, ${wordsColumnsSql()}, tag`;
    const from = `(SELECT ${columns} FROM plants ${within} ORDER BY ${orderBy(order, PLANTS)} LIMIT @window) AS plants`;
    return { from, source: PLANTS };
  }
  const index = { id: 'rowid' };
  const within = after ? `AND ${afterCondition(order, index)}` : '';
  const candidates = `SELECT rowid FROM plants_search WHERE plants_search MATCH @match ${within}`;
  const from = `(${candidates} ORDER BY ${orderBy(order, index)} LIMIT @window) AS found JOIN plants ON plants.id = found.rowid`;
  return { from, source: { id: 'found.rowid' } };
}

/**
 * An export's plants, all of them in id order, by their named columns: one statement
 * an export reads chunk by chunk (plant-export.ts). A search is the exact one, so an
 * export costs what its matches cost.
 */
export function exportStatement(filter: PlantFilter): FindStatement {
  const source = sourceOf('id', filter);
  const matching = matchingOf('exact', 'id', filter.terms);
  return {
    key: `export:${shapeOf(filter, matching)}`,
    sql: () =>
      `SELECT ${plantColumnsSql('plants')} FROM ${source.from} ` +
      `${where(filterConditions(filter, source, matching))} ORDER BY ${orderBy('id', source)}`,
    parameters: filterParameters(filter, matching),
  };
}

/**
 * A count: of a search, the exact search's matches (from the search index alone
 * when no tag is asked too), within the time budget. Without search terms, SQLite
 * counts an index's entries in one C loop, which the budget's per-row call would
 * only slow down several times over.
 */
export function countStatement(filter: PlantFilter): FindStatement {
  const matching = matchingOf('exact', 'id', filter.terms);
  const onlyTerms = hasTerms(filter.terms) && (filter.tags === undefined || filter.tags.length === 0);
  const budget = hasTerms(filter.terms) ? [WITHIN_READ_BUDGET] : [];
  const sql = onlyTerms
    ? `SELECT count(*) FROM plants_search WHERE ${WITHIN_READ_BUDGET} AND plants_search MATCH @match`
    : `SELECT count(*) FROM plants ${where([...budget, ...filterConditions(filter, PLANTS, matching)])}`;
  return { key: `count:${shapeOf(filter, matching)}`, sql: () => sql, parameters: filterParameters(filter, matching) };
}

/** A page row: [json, id, name_key in name orders], raw and with bigint ids. */
type FoundRow = [json: string, id: bigint, nameKey?: string];

export class SqlitePlantFinder {
  private readonly statements = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {}

  /** A page an index yields exactly has one way; others try the walk, then the exact search (the file's comment). */
  page(query: ListPlantsQuery): PlantPage {
    if (this.oneWay(query)) return this.pageOf(query, this.found(query, 'direct'));
    const walked = this.found(query, 'walk');
    return this.pageOf(query, walked.length > query.limit ? walked : this.found(query, 'exact'));
  }

  /** Always exact: SQLite keeps no row estimates worth answering with, and counting an index in-process is fast. */
  count(filter: PlantFilter): PlantCount {
    const [count] = this.all(countStatement(filter))[0] as [bigint];
    return { count: Number(count), exact: true };
  }

  pageCursorSecret(): string {
    const [secret] = this.all({
      key: 'secret',
      sql: () => "SELECT secret FROM store_secrets WHERE name = 'page-cursor'",
      parameters: {},
    })[0] as [string];
    return secret;
  }

  /**
   * Whether an index yields exactly the page's plants in order, with nothing to walk past: no filter; or in id
   * order, tags (plants_tag_id) or, without tags, search terms no longer than the indexed prefix. In name order
   * a filter always leaves plants_name_key entries to pass over.
   */
  private oneWay({ order, terms, tags }: ListPlantsQuery): boolean {
    const tagged = tags !== undefined && tags.length > 0;
    if (!hasTerms(terms) && !tagged) return true;
    if (isNameOrder(order ?? 'id')) return false;
    return !hasTerms(terms) || (longTerms(terms).length === 0 && !tagged);
  }

  private found(query: ListPlantsQuery, plan: PagePlan): FoundRow[] {
    return this.all(pageStatement(query, plan)) as FoundRow[];
  }

  private pageOf(query: ListPlantsQuery, rows: FoundRow[]): PlantPage {
    const hasMore = rows.length > query.limit;
    const shown = hasMore ? rows.slice(0, query.limit) : rows;
    const last = shown.at(-1);
    return {
      json: `[${shown.map((row) => row[0]).join(',')}]`,
      lastId: last?.[1],
      ...(last?.[2] === undefined ? {} : { lastKey: last[2] }),
      hasMore,
    };
  }

  private all({ key, sql, parameters }: FindStatement): unknown[] {
    return guarded(() => {
      let statement = this.statements.get(key);
      if (statement === undefined) {
        // safeIntegers: ids come back as bigint, never rounded through a double.
        statement = this.db.prepare(sql()).safeIntegers(true).raw(true);
        this.statements.set(key, statement);
      }
      return statement.all(parameters);
    });
  }
}

function requiredKey(query: ListPlantsQuery): string {
  if (query.afterKey === undefined)
    throw new Error(`a page after a plant in ${query.order ?? 'id'} order needs that plant's name key`);
  return query.afterKey;
}
