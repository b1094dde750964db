import type pg from 'pg';
import { StoreUnavailableError } from '../../http/errors.js';
import { samePlant } from '../../plants/same-plant.js';
import type { CreatePlantOutcome, ListPlantsQuery, PlantRecord, PlantStore } from '../types.js';
import { guarded } from './errors.js';
import { INSERT_PLANT_WITH_OUTBOX, outboxValues } from './webhook-store.js';

interface PlantRow {
  /** int8, parsed to bigint by the pool's type parser. */
  id: bigint;
  name: string;
  tag: string | null;
}

function toRecord(row: PlantRow): PlantRecord {
  return row.tag === null ? { id: row.id, name: row.name } : { id: row.id, name: row.name, tag: row.tag };
}

/** Ids are sent as decimal text, never as a JS number. */
const param = (id: bigint): string => id.toString();

/**
 * How often a create retries when the row it collided with was deleted before it
 * could be read. Each retry needs another client to delete the id again in that
 * gap, so reaching this takes sustained, deliberate contention.
 */
const MAX_CREATE_ATTEMPTS = 10;

// Named statements are prepared once per connection and reused. The insert is
// INSERT_PLANT_WITH_OUTBOX (webhook-store.ts): INSERT .. ON CONFLICT DO NOTHING
// RETURNING id, plus the webhook event of a plant it created, in the same statement.
const SELECT_BY_ID = { name: 'plants.by-id', text: 'SELECT id, name, tag FROM plants WHERE id = $1' };
const DELETE_BY_ID = { name: 'plants.delete', text: 'DELETE FROM plants WHERE id = $1' };
const LIST_FIRST = { name: 'plants.list', text: 'SELECT id, name, tag FROM plants ORDER BY id LIMIT $1' };
const LIST_AFTER = { name: 'plants.list-after', text: 'SELECT id, name, tag FROM plants WHERE id > $1 ORDER BY id LIMIT $2' };
const LIST_TAG_FIRST = { name: 'plants.list-tag', text: 'SELECT id, name, tag FROM plants WHERE tag = $1 ORDER BY id LIMIT $2' };
const LIST_TAG_AFTER = {
  name: 'plants.list-tag-after',
  text: 'SELECT id, name, tag FROM plants WHERE tag = $1 AND id > $2 ORDER BY id LIMIT $3',
};

export class PostgresPlantStore implements PlantStore {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * The primary key decides who wins: INSERT .. ON CONFLICT DO NOTHING commits a new
   * row or changes nothing (it waits for a concurrent insert of the same id to commit
   * or roll back, so it never misses one). On a conflict the stored row is read and
   * compared. Each statement commits on its own; if the row was deleted between the
   * two, the id is free again and the create starts over.
   */
  async createPlant(plant: PlantRecord): Promise<CreatePlantOutcome> {
    return guarded(async () => {
      for (let attempt = 0; attempt < MAX_CREATE_ATTEMPTS; attempt += 1) {
        const values = [param(plant.id), plant.name, plant.tag ?? null, ...outboxValues(plant)];
        const inserted = await this.pool.query({ ...INSERT_PLANT_WITH_OUTBOX, values });
        if (inserted.rowCount === 1) return { kind: 'created', plant };
        const row = (await this.pool.query<PlantRow>({ ...SELECT_BY_ID, values: [param(plant.id)] })).rows[0];
        if (row === undefined) continue;
        const existing = toRecord(row);
        return samePlant(existing, plant) ? { kind: 'replayed', plant: existing } : { kind: 'conflict', existing };
      }
      throw new StoreUnavailableError(`plant ${plant.id} was deleted and recreated too often while being created; retry`);
    });
  }

  async getPlant(id: bigint): Promise<PlantRecord | undefined> {
    const row = await guarded(async () => (await this.pool.query<PlantRow>({ ...SELECT_BY_ID, values: [param(id)] })).rows[0]);
    return row === undefined ? undefined : toRecord(row);
  }

  async listPlants({ limit, after, tag }: ListPlantsQuery): Promise<PlantRecord[]> {
    const statement =
      tag === undefined
        ? after === undefined
          ? { ...LIST_FIRST, values: [limit] }
          : { ...LIST_AFTER, values: [param(after), limit] }
        : after === undefined
          ? { ...LIST_TAG_FIRST, values: [tag, limit] }
          : { ...LIST_TAG_AFTER, values: [tag, param(after), limit] };
    const rows = await guarded(async () => (await this.pool.query<PlantRow>(statement)).rows);
    return rows.map(toRecord);
  }

  async deletePlant(id: bigint): Promise<boolean> {
    return guarded(async () => (await this.pool.query({ ...DELETE_BY_ID, values: [param(id)] })).rowCount === 1);
  }
}
