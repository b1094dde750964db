/**
 * GET /plants on SQLite: pages in any order, filtered by tags and search terms, and
 * counts. One statement per shape of query (order, cursor or not, how many tags,
 * search or not), prepared on first use and kept: at most a few hundred.
 *
 * Every order is an index walk from the cursor on, never OFFSET: id orders walk the
 * table itself (or plants_tag_id), name orders plants_name_key, so page 10,000 costs
 * what page 1 does. A search reads the FTS5 index (plants_search, migration 0008).
 *
 * The page is read one row past its end: that row says whether more follow. Each
 * row's JSON is the json column (migration 5), written by SQLite with the row.
 */
import type Database from 'better-sqlite3';
import { isNameOrder } from '../plant-order.js';
import type { ListPlantsQuery, PlantCount, PlantFilter, PlantOrder, PlantPage } from '../types.js';
import { guarded } from './errors.js';

/**
 * Where the rows come from, and so which column is the id the order and the cursor
 * use. A search in id order is driven by the FTS5 index itself: it yields its
 * matches in rowid order, from the cursor on, so the first page stops after a page
 * of matches. (Asked as `id IN (matches)` instead, SQLite collects every match
 * first.) A search in name order does that: it collects the matches and sorts them
 * (EXPLAIN QUERY PLAN: a temp b-tree), so it costs what its matches cost.
 */
interface Source {
  readonly from: string;
  readonly id: string;
  readonly match: string;
}

const PLANTS: Source = { from: 'plants', id: 'id', match: 'id IN (SELECT rowid FROM plants_search WHERE plants_search MATCH @match)' };
const SEARCH_IN_ID_ORDER: Source = { from: 'plants_search JOIN plants ON plants.id = plants_search.rowid', id: 'plants_search.rowid', match: 'plants_search MATCH @match' };

function sourceOf(order: PlantOrder, { terms }: PlantFilter): Source {
  return terms !== undefined && terms.length > 0 && !isNameOrder(order) ? SEARCH_IN_ID_ORDER : PLANTS;
}

function orderBy(order: PlantOrder, { id }: Source): string {
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

function afterCondition(order: PlantOrder, { id }: Source): string {
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
 * FTS5 answers a prefix query by first merging the lists of every word with that
 * prefix into one, in memory: `plant*` over a store where every name has the word
 * "plant" read a million entries for each query (110 ms). So the index also keeps
 * every word's first one to five characters as entries of their own (prefix =
 * '1 2 3 4 5', migration 8), which FTS5 reads lazily like any word, and a term is
 * asked as its first five characters at most; a longer term is then checked against
 * the plant's words (a space before it: the start of a word). The same search is
 * answered at a cost that follows the size of the page, not of the store. (With
 * three characters indexed, the checks of the candidates they let through cost the
 * bench's four-digit search twice what the index alone does: bench/README.md.)
 */
export const INDEXED_PREFIX = 5;

/** The terms longer than the indexed prefix, which each need their check. */
function longTerms(terms: readonly string[] | undefined): string[] {
  return (terms ?? []).filter((term) => Array.from(term).length > INDEXED_PREFIX);
}

function filterConditions({ tags, terms }: PlantFilter, source: Source): string[] {
  const conditions: string[] = [];
  if (tags !== undefined && tags.length > 0) {
    conditions.push(tags.length === 1 ? 'tag = @tag0' : `tag IN (${tags.map((_, i) => `@tag${i}`).join(', ')})`);
  }
  if (terms !== undefined && terms.length > 0) {
    conditions.push(source.match);
    longTerms(terms).forEach((_, i) => conditions.push(`instr(' ' || plants.name_words || ' ' || plants.tag_words, ' ' || @term${i}) > 0`));
  }
  return conditions;
}

function where(conditions: readonly string[]): string {
  return conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
}

/** An FTS5 query: every term's indexed prefix ("mon"*), all of them required. Terms hold only letters and digits. */
function matchExpression(terms: readonly string[]): string {
  return terms.map((term) => `"${Array.from(term).slice(0, INDEXED_PREFIX).join('')}"*`).join(' AND ');
}

/** The named parameters of a filter. */
function filterParameters({ tags, terms }: PlantFilter): Record<string, unknown> {
  const parameters: Record<string, unknown> = {};
  tags?.forEach((tag, i) => (parameters[`tag${i}`] = tag));
  if (terms !== undefined && terms.length > 0) parameters.match = matchExpression(terms);
  longTerms(terms).forEach((term, i) => (parameters[`term${i}`] = term));
  return parameters;
}

function shapeOf({ tags, terms }: PlantFilter): string {
  return `${tags?.length ?? 0}:${terms !== undefined && terms.length > 0}:${longTerms(terms).length}`;
}

/** A statement of the finder: its cache key, its text (built only when not cached) and its named parameters. */
export interface FindStatement {
  readonly key: string;
  readonly sql: () => string;
  readonly parameters: Record<string, unknown>;
}

/**
 * The page query: one row past the page, [json, id] each, and in name orders the
 * name key too (for the cursor): reading it on every page cost a sixth more per
 * id-ordered page of 100.
 */
export function pageStatement(query: ListPlantsQuery): FindStatement {
  const order = query.order ?? 'id';
  const source = sourceOf(order, query);
  const conditions = filterConditions(query, source);
  const parameters: Record<string, unknown> = { ...filterParameters(query), limit: query.limit + 1 };
  if (query.after !== undefined) {
    conditions.push(afterCondition(order, source));
    parameters.after = query.after;
    if (isNameOrder(order)) parameters.afterKey = requiredKey(query);
  }
  return {
    key: `page:${order}:${query.after !== undefined}:${shapeOf(query)}`,
    sql: () => `SELECT plants.json, plants.id${isNameOrder(order) ? ', plants.name_key' : ''} FROM ${source.from} ${where(conditions)} ORDER BY ${orderBy(order, source)} LIMIT @limit`,
    parameters,
  };
}

/** A chunk of an export: the next plants in id order, [id, name, tag] each. */
export function exportChunkStatement(filter: PlantFilter, after: bigint | undefined, limit: number): FindStatement {
  const source = sourceOf('id', filter);
  const conditions = filterConditions(filter, source);
  const parameters: Record<string, unknown> = { ...filterParameters(filter), limit };
  if (after !== undefined) {
    conditions.push(afterCondition('id', source));
    parameters.after = after;
  }
  return {
    key: `export:${after !== undefined}:${shapeOf(filter)}`,
    sql: () => `SELECT plants.id, plants.name, plants.tag FROM ${source.from} ${where(conditions)} ORDER BY ${orderBy('id', source)} LIMIT @limit`,
    parameters,
  };
}

export function countStatement(filter: PlantFilter): FindStatement {
  return {
    key: `count:${shapeOf(filter)}`,
    sql: () => `SELECT count(*) FROM plants ${where(filterConditions(filter, PLANTS))}`,
    parameters: filterParameters(filter),
  };
}

/** A page row: [json, id, name_key in name orders], raw and with bigint ids. */
type FoundRow = [json: string, id: bigint, nameKey?: string];

export class SqlitePlantFinder {
  private readonly statements = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {}

  page(query: ListPlantsQuery): PlantPage {
    const rows = this.all(pageStatement(query)) as FoundRow[];
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

  /** Always exact: SQLite keeps no row estimates worth answering with, and counting an index in-process is fast. */
  count(filter: PlantFilter): PlantCount {
    const [count] = this.all(countStatement(filter))[0] as [bigint];
    return { count: Number(count), exact: true };
  }

  pageCursorSecret(): string {
    const [secret] = this.all({ key: 'secret', sql: () => "SELECT secret FROM store_secrets WHERE name = 'page-cursor'", parameters: {} })[0] as [string];
    return secret;
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
  if (query.afterKey === undefined) throw new Error(`a page after a plant in ${query.order ?? 'id'} order needs that plant's name key`);
  return query.afterKey;
}
