/**
 * The change log on SQLite (migration 0009): read in the reader threads, pruned through the writer thread.
 * Changes only come from this process's writer, so the signal is in-process (ChangeSignal). The main thread's
 * ChangeLog is in delegating-change-log.ts, as the threads' protocols import this module.
 */
import type Database from 'better-sqlite3';
import type { ChangeLogBounds, PlantChangeEntry } from '../types.js';
import { guarded } from './errors.js';

/** The listeners of a store's change signal. */
export class ChangeSignal {
  private readonly listeners = new Set<() => void>();

  add(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  fire(): void {
    for (const listener of this.listeners) listener();
  }
}

type EntryRow = [
  position: bigint,
  type: PlantChangeEntry['type'],
  plantId: bigint,
  tag: string | null,
  payload: string,
  tagChanged: bigint,
  previousTag: string | null,
];

/** The reader threads' half: the entries after a position, and the log's bounds. */
export class SqliteChangeReads {
  private readonly entriesAfter: Database.Statement;
  private readonly last: Database.Statement;
  private readonly oldest: Database.Statement;
  private readonly history: Database.Statement;

  constructor(db: Database.Database) {
    this.entriesAfter = db
      .prepare(
        'SELECT position, type, plant_id, tag, payload, tag_changed, previous_tag FROM plant_changes WHERE position > ? ORDER BY position LIMIT ?',
      )
      .safeIntegers(true)
      .raw(true);
    // AUTOINCREMENT's counter: the last position taken, even when retention has pruned it.
    this.last = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'plant_changes'").pluck().safeIntegers(true);
    this.oldest = db.prepare('SELECT min(position) FROM plant_changes').pluck().safeIntegers(true);
    this.history = db.prepare('SELECT history FROM change_log_history').pluck();
  }

  after(position: bigint, limit: number): PlantChangeEntry[] {
    const rows = guarded(() => this.entriesAfter.all(position, limit)) as EntryRow[];
    return rows.map(([at, type, plantId, tag, payload, tagChanged, previousTag]) =>
      tagChanged === 0n
        ? { position: at, type, plantId, tag, payload }
        : { position: at, type, plantId, tag, payload, previousTag },
    );
  }

  bounds(): ChangeLogBounds {
    return guarded(() => {
      const last = (this.last.get() as bigint | undefined) ?? 0n;
      const oldest = this.oldest.get() as bigint | null;
      return { history: this.history.get() as string, last, oldest: oldest ?? undefined };
    });
  }
}

/** The writer thread's half: deleting old entries, oldest first, a bounded number per call. */
export class SqliteChangeLogPruner {
  private readonly deleteOld: Database.Statement;

  constructor(db: Database.Database) {
    this.deleteOld = db.prepare(
      'DELETE FROM plant_changes WHERE position IN (SELECT position FROM plant_changes WHERE created_at < ? ORDER BY position LIMIT ?)',
    );
  }

  prune(beforeMs: number, limit: number): number {
    return this.deleteOld.run(beforeMs, limit).changes;
  }
}
