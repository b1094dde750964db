/**
 * Writing the change log (plant_changes, migration 0009) in the plant writes' own transaction: the writes note
 * each change and the log gets them at the end in one statement. AUTOINCREMENT, under SQLite's one writer,
 * keeps positions consecutive and in commit order (change-log.ts).
 *
 * Not triggers (migration 0011 dropped them): a row trigger on `plants` made SQLite copy an import's whole
 * INSERT .. SELECT into a temp table first (bench/README.md, "Import and export memory").
 * Imports and copies write payloads from the rows' `json` column, the same text as domain/events.ts's.
 */
import type Database from 'better-sqlite3';
import { PLANT_CREATED, PLANT_DELETED, PLANT_UPDATED, type EventType } from '../../domain/events.js';
import { deletedPlantJson, plantJson } from '../../domain/plant-json.js';
import type { PlantRecord } from '../../domain/plant.js';

/** previousTag: the tag an update replaced (null for none); undefined when it kept it, and for creates and deletes. */
type Entry = readonly [
  type: EventType,
  plantId: bigint,
  tag: string | null,
  payload: string,
  previousTag?: string | null,
];

/** One transaction's changes, in the order they happened. */
export class ChangeLogEntries {
  private readonly entries: Entry[] = [];

  created(plant: PlantRecord): void {
    this.entries.push([PLANT_CREATED, plant.id, plant.tag ?? null, plantJson(plant)]);
  }

  updated(before: PlantRecord, after: PlantRecord): void {
    const tag = after.tag ?? null;
    const previous = before.tag ?? null;
    const payload = plantJson(after);
    this.entries.push(
      previous === tag ? [PLANT_UPDATED, after.id, tag, payload] : [PLANT_UPDATED, after.id, tag, payload, previous],
    );
  }

  /** `tag`: the one the plant had, for the stream's tag filter. */
  deleted(id: bigint, tag: string | null): void {
    this.entries.push([PLANT_DELETED, id, tag, deletedPlantJson(id)]);
  }

  get size(): number {
    return this.entries.length;
  }

  /** The entries as one JSON array for json_each: ids written as digits, so an int64 keeps every one. */
  toJson(): string {
    return `[${this.entries
      .map(([type, id, tag, payload, previous]) => {
        const change = previous === undefined ? '0,null' : `1,${JSON.stringify(previous)}`;
        return `["${type}",${id},${JSON.stringify(tag)},${JSON.stringify(payload)},${change}]`;
      })
      .join(',')}]`;
  }
}

/** The head of an INSERT into the log, for the writes of many plants by one statement (an import, a copy) to complete
 * with their SELECT. */
export const APPEND_CHANGES = 'INSERT INTO plant_changes (type, plant_id, tag, payload, created_at)';

export class ChangeLogWriter {
  private readonly append: Database.Statement;

  constructor(db: Database.Database) {
    this.append = db.prepare(
      'INSERT INTO plant_changes (type, plant_id, tag, payload, tag_changed, previous_tag, created_at) ' +
        'SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, ? FROM json_each(?) ORDER BY key',
    );
  }

  /** Appends a transaction's changes; call it inside that transaction, after its plant writes. */
  write(entries: ChangeLogEntries, now: number): void {
    if (entries.size > 0) this.append.run(now, entries.toJson());
  }
}
