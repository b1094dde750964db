import type Database from 'better-sqlite3';
import type { CreatePlantOutcome, ListPlantsQuery, PlantRecord, PlantStore } from '../types.js';
import { samePlant } from '../../plants/same-plant.js';
import { guarded } from './errors.js';
import { SqliteWebhookOutbox } from './webhook-store.js';

interface PlantRow {
  id: bigint;
  name: string;
  tag: string | null;
}

function toRecord(row: PlantRow): PlantRecord {
  return row.tag === null ? { id: row.id, name: row.name } : { id: row.id, name: row.name, tag: row.tag };
}

export class SqlitePlantStore implements PlantStore {
  private readonly insert: Database.Statement;
  private readonly selectById: Database.Statement;
  private readonly deleteById: Database.Statement;
  private readonly listFirst: Database.Statement;
  private readonly listAfter: Database.Statement;
  private readonly listTagFirst: Database.Statement;
  private readonly listTagAfter: Database.Statement;
  private readonly createAtomically: Database.Transaction<(plant: PlantRecord) => CreatePlantOutcome>;
  private readonly outbox: SqliteWebhookOutbox;

  constructor(db: Database.Database) {
    // safeIntegers: ids come back as bigint, never rounded through a double.
    const prepare = (sql: string) => db.prepare(sql).safeIntegers(true);
    this.insert = prepare('INSERT INTO plants (id, name, tag, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING');
    this.selectById = prepare('SELECT id, name, tag FROM plants WHERE id = ?');
    this.deleteById = prepare('DELETE FROM plants WHERE id = ?');
    this.listFirst = prepare('SELECT id, name, tag FROM plants ORDER BY id LIMIT ?');
    this.listAfter = prepare('SELECT id, name, tag FROM plants WHERE id > ? ORDER BY id LIMIT ?');
    this.listTagFirst = prepare('SELECT id, name, tag FROM plants WHERE tag = ? ORDER BY id LIMIT ?');
    this.listTagAfter = prepare('SELECT id, name, tag FROM plants WHERE tag = ? AND id > ? ORDER BY id LIMIT ?');

    this.outbox = new SqliteWebhookOutbox(db);

    // The primary key decides who wins: INSERT .. ON CONFLICT DO NOTHING, then read
    // the row that is there. IMMEDIATE holds the write lock across both statements,
    // so another process cannot delete the row in between.
    this.createAtomically = db.transaction((plant: PlantRecord): CreatePlantOutcome => {
      const inserted = this.insert.run(plant.id, plant.name, plant.tag ?? null, BigInt(Date.now()));
      if (inserted.changes === 1) {
        // The webhook event commits (or rolls back) with the plant: the outbox.
        this.outbox.plantCreated(plant);
        return { kind: 'created', plant };
      }
      const existing = toRecord(this.selectById.get(plant.id) as PlantRow);
      return samePlant(existing, plant) ? { kind: 'replayed', plant: existing } : { kind: 'conflict', existing };
    });
  }

  async createPlant(plant: PlantRecord): Promise<CreatePlantOutcome> {
    return guarded(() => this.createAtomically.immediate(plant));
  }

  async getPlant(id: bigint): Promise<PlantRecord | undefined> {
    const row = guarded(() => this.selectById.get(id)) as PlantRow | undefined;
    return row === undefined ? undefined : toRecord(row);
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

  async deletePlant(id: bigint): Promise<boolean> {
    return guarded(() => this.deleteById.run(id)).changes === 1;
  }
}
