/**
 * Writing the change log (plant_changes, migration 0009) in the transaction of the
 * plant writes it tells of: the writes note each change, and the log gets them at
 * the transaction's end, in one statement, in the order they happened. A position
 * is still taken at commit time by AUTOINCREMENT, by SQLite's one writer, so the
 * positions stay consecutive and in commit order (change-log.ts).
 *
 * Not triggers (which migration 0011 dropped): a row trigger on `plants` made SQLite
 * copy the whole SELECT of an INSERT .. SELECT into plants (an import's apply) into
 * a temporary table of its own first, with its own page cache: about a third of the
 * apply's time and 17 MB of the writer thread's memory at 1,000,000 plants
 * (bench/README.md, "Import and export memory").
 *
 * A payload is the event's JSON as webhooks carry it (domain/events.ts); an import
 * and a copy write theirs from the rows' `json` column, the same text (text rules
 * allow no control characters, so JSON.stringify and json_quote agree).
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
