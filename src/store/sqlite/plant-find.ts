/**
 * GET /plants on SQLite: pages in any order, filtered by tags and search terms, and
 * counts. One statement per shape of query (order, cursor or not, how many tags,
 * search or not), prepared on first use and kept: at most a few hundred.
 *
 * Every order is an index walk from the cursor on, never OFFSET: id orders walk the
 * table itself (or plants_tag_id), name orders plants_name_key, so page 10,000 costs
 * what page 1 does. A search reads the FTS5 index (plants_search, migration 0008),
 * whose matches come in rowid (= id) order.
 *
 * The page is read one row past its end: that row says whether more follow. Each
 * row's JSON is the json column (migration 5), written by SQLite with the row.
 */
import type Database from 'better-sqlite3';
import type { ListPlantsQuery, PlantCount, PlantFilter, PlantOrder, PlantPage } from '../types.js';
import { guarded } from './errors.js';

const ORDER_BY: Readonly<Record<PlantOrder, string>> = {
  id: 'id',
  '-id': 'id DESC',
  name: 'name_key, id',
  '-name': 'name_key DESC, id DESC',
};

const AFTER: Readonly<Record<PlantOrder, string>> = {
  id: 'id > @after',
  '-id': 'id < @after',
  name: '(name_key, id) > (@afterKey, @after)',
  '-name': '(name_key, id) < (@afterKey, @after)',
};

function filterConditions({ tags, terms }: PlantFilter): string[] {
  const conditions: string[] = [];
  if (tags !== undefined && tags.length > 0) {
    conditions.push(tags.length === 1 ? 'tag = @tag0' : `tag IN (${tags.map((_, i) => `@tag${i}`).join(', ')})`);
  }
  if (terms !== undefined && terms.length > 0) conditions.push('id IN (SELECT rowid FROM plants_search WHERE plants_search MATCH @match)');
  return conditions;
}

function where(conditions: readonly string[]): string {
  return conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
}

/** An FTS5 query: every term as a prefix ("mon"*), all of them required. Terms hold only letters and digits. */
function matchExpression(terms: readonly string[]): string {
  return terms.map((term) => `"${term}"*`).join(' AND ');
}

/** The named parameters of a filter. */
function filterParameters({ tags, terms }: PlantFilter): Record<string, unknown> {
  const parameters: Record<string, unknown> = {};
  tags?.forEach((tag, i) => (parameters[`tag${i}`] = tag));
  if (terms !== undefined && terms.length > 0) parameters.match = matchExpression(terms);
  return parameters;
}

function shapeOf({ tags, terms }: PlantFilter): string {
  return `${tags?.length ?? 0}:${terms !== undefined && terms.length > 0}`;
}

/** A page row: [json, id, name_key], raw and with bigint ids. */
type FoundRow = [json: string, id: bigint, nameKey: string];

export class SqlitePlantFinder {
  private readonly statements = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {}

  page(query: ListPlantsQuery): PlantPage {
    const order = query.order ?? 'id';
    const conditions = filterConditions(query);
    const parameters = { ...filterParameters(query), limit: query.limit + 1 } as Record<string, unknown>;
    if (query.after !== undefined) {
      conditions.push(AFTER[order]);
      parameters.after = query.after;
      if (order === 'name' || order === '-name') parameters.afterKey = requiredKey(query);
    }
    const key = `page:${order}:${query.after !== undefined}:${shapeOf(query)}`;
    const sql = () => `SELECT json, id, name_key FROM plants ${where(conditions)} ORDER BY ${ORDER_BY[order]} LIMIT @limit`;
    const rows = guarded(() => this.statement(key, sql).all(parameters)) as FoundRow[];
    const hasMore = rows.length > query.limit;
    const shown = hasMore ? rows.slice(0, query.limit) : rows;
    const last = shown.at(-1);
    return {
      json: `[${shown.map((row) => row[0]).join(',')}]`,
      lastId: last?.[1],
      ...(last !== undefined && (order === 'name' || order === '-name') ? { lastKey: last[2] } : {}),
      hasMore,
    };
  }

  /** Always exact: SQLite keeps no row estimates worth answering with, and counting an index in-process is fast. */
  count(filter: PlantFilter): PlantCount {
    const sql = () => `SELECT count(*) FROM plants ${where(filterConditions(filter))}`;
    const count = guarded(() => this.statement(`count:${shapeOf(filter)}`, sql).get(filterParameters(filter))) as [bigint];
    return { count: Number(count[0]), exact: true };
  }

  pageCursorSecret(): string {
    const sql = () => "SELECT secret FROM store_secrets WHERE name = 'page-cursor'";
    return (guarded(() => this.statement('secret', sql).get()) as [string])[0];
  }

  private statement(key: string, sql: () => string): Database.Statement {
    let statement = this.statements.get(key);
    if (statement === undefined) {
      // safeIntegers: ids come back as bigint, never rounded through a double.
      statement = this.db.prepare(sql()).safeIntegers(true).raw(true);
      this.statements.set(key, statement);
    }
    return statement;
  }
}

function requiredKey(query: ListPlantsQuery): string {
  if (query.afterKey === undefined) throw new Error(`a page after a plant in ${query.order ?? 'id'} order needs that plant's name key`);
  return query.afterKey;
}
