/**
 * Plants on SQLite: reads run on the main thread's connection (a point query or one
 * page costs microseconds, less than a trip to another thread); writes go through
 * group commit to the writer thread, so no fsync ever blocks the event loop.
 */
import type Database from 'better-sqlite3';
import type {
  CreatePlantOutcome, DeletePlantOutcome, ExpectedVersion, ListPlantsQuery, PlantChange, PlantPage, PlantRecord, PlantStore, UpdatePlantOutcome, VersionedPlant,
} from '../types.js';
import { guarded } from './errors.js';
import type { GroupCommitWriter } from './group-commit.js';
import type { PlantState, PlantWriteResult } from './writer-protocol.js';

/** A row as an array ([id, name, tag]): better-sqlite3's raw mode, which reads a page of 100 in 2/3 of the time rows as objects take. */
type PlantRow = [id: bigint, name: string, tag: string | null];

function toRecord([id, name, tag]: PlantRow): PlantRecord {
  return tag === null ? { id, name } : { id, name, tag };
}

function versioned(id: bigint, { name, tag, version }: PlantState): VersionedPlant {
  return tag === null ? { id, name, version } : { id, name, tag, version };
}

function unexpected(result: PlantWriteResult, what: string): Error {
  return new Error(`unexpected result '${result.kind}' for ${what}`);
}

/**
 * One statement per page: the page's rows (an index range scan, in id order), their
 * stored JSON texts joined into an array (the json column, migration 5), the last id,
 * and whether a later row exists. group_concat receives the rows in the order the
 * subquery yields them: SQLite runs a FROM-clause subquery with ORDER BY .. LIMIT as
 * a co-routine, and cannot flatten it into an aggregate. (An ORDER BY inside the
 * aggregate would sort again, for every page.) The pagination tests walk
 * thousands of ids through every page size and would catch a change in that order.
 */
function pageSql(filter: string, laterFilter: string): string {
  return `
    SELECT body, last, n = @limit AND EXISTS (SELECT 1 FROM plants WHERE ${laterFilter}) AS more
    FROM (
      SELECT '[' || ifnull(group_concat(json, ','), '') || ']' AS body, max(id) AS last, count(*) AS n
      FROM (SELECT id, json FROM plants ${filter} ORDER BY id LIMIT @limit)
    )`;
}

type PageRow = [body: string, last: bigint | null, more: bigint];

export class SqlitePlantStore implements PlantStore {
  private readonly selectById: Database.Statement;
  private readonly listFirst: Database.Statement;
  private readonly listAfter: Database.Statement;
  private readonly listTagFirst: Database.Statement;
  private readonly listTagAfter: Database.Statement;
  private readonly pageFirst: Database.Statement;
  private readonly pageAfter: Database.Statement;
  private readonly pageTagFirst: Database.Statement;
  private readonly pageTagAfter: Database.Statement;

  constructor(db: Database.Database, private readonly writer: GroupCommitWriter) {
    // safeIntegers: ids come back as bigint, never rounded through a double.
    const prepare = (sql: string) => db.prepare(sql).safeIntegers(true).raw(true);
    this.selectById = prepare('SELECT name, tag, version FROM plants WHERE id = ?').raw(false);
    this.listFirst = prepare('SELECT id, name, tag FROM plants ORDER BY id LIMIT ?');
    this.listAfter = prepare('SELECT id, name, tag FROM plants WHERE id > ? ORDER BY id LIMIT ?');
    this.listTagFirst = prepare('SELECT id, name, tag FROM plants WHERE tag = ? ORDER BY id LIMIT ?');
    this.listTagAfter = prepare('SELECT id, name, tag FROM plants WHERE tag = ? AND id > ? ORDER BY id LIMIT ?');
    this.pageFirst = prepare(pageSql('', 'id > last'));
    this.pageAfter = prepare(pageSql('WHERE id > @after', 'id > last'));
    this.pageTagFirst = prepare(pageSql('WHERE tag = @tag', 'tag = @tag AND id > last'));
    this.pageTagAfter = prepare(pageSql('WHERE tag = @tag AND id > @after', 'tag = @tag AND id > last'));
  }

  async createPlant(plant: PlantRecord): Promise<CreatePlantOutcome> {
    const result = await this.writer.write({ op: 'create', id: plant.id, name: plant.name, tag: plant.tag ?? null });
    switch (result.kind) {
      case 'created':
        return { kind: 'created', plant: { ...plant, version: result.version } };
      case 'replayed':
        return { kind: 'replayed', plant: versioned(plant.id, result.state) };
      case 'conflict':
        return { kind: 'conflict', existing: versioned(plant.id, result.state) };
      default:
        throw unexpected(result, 'a create');
    }
  }

  async getPlant(id: bigint): Promise<VersionedPlant | undefined> {
    const row = guarded(() => this.selectById.get(id)) as PlantState | undefined;
    return row === undefined ? undefined : versioned(id, row);
  }

  async updatePlant(change: PlantChange, expected?: ExpectedVersion): Promise<UpdatePlantOutcome> {
    const result = await this.writer.write({ op: 'update', id: change.id, name: change.name, tag: change.tag, expected });
    switch (result.kind) {
      case 'updated':
      case 'unchanged':
        return { kind: result.kind, plant: versioned(change.id, result.state) };
      case 'not-found':
        return result;
      case 'precondition-failed':
        return { kind: 'precondition-failed', current: versioned(change.id, result.state) };
      default:
        throw unexpected(result, 'an update');
    }
  }

  async listPlants({ limit, after, tag }: ListPlantsQuery): Promise<PlantRecord[]> {
    const rows = guarded(() => {
      if (tag === undefined) {
        return after === undefined ? this.listFirst.all(limit) : this.listAfter.all(after, limit);
      }
      return after === undefined ? this.listTagFirst.all(tag, limit) : this.listTagAfter.all(tag, after, limit);
    }) as PlantRow[];
    return rows.map(toRecord);
  }

  async listPlantsPage({ limit, after, tag }: ListPlantsQuery): Promise<PlantPage> {
    const [json, last, more] = guarded(() => {
      if (tag === undefined) {
        return after === undefined ? this.pageFirst.get({ limit }) : this.pageAfter.get({ after, limit });
      }
      return after === undefined ? this.pageTagFirst.get({ tag, limit }) : this.pageTagAfter.get({ tag, after, limit });
    }) as PageRow;
    return { json, lastId: last ?? undefined, hasMore: more === 1n };
  }

  async deletePlant(id: bigint, expected?: ExpectedVersion): Promise<DeletePlantOutcome> {
    const result = await this.writer.write({ op: 'delete', id, expected });
    switch (result.kind) {
      case 'deleted':
      case 'not-found':
        return result;
      case 'precondition-failed':
        return { kind: 'precondition-failed', current: versioned(id, result.state) };
      default:
        throw unexpected(result, 'a delete');
    }
  }
}
