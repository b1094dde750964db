/**
 * Exports on SQLite, in a reader thread: each export has its own connection (the thread serves other reads
 * between chunks) and one statement read chunk by chunk, whose read transaction is a WAL snapshot that never
 * blocks the writer. The WAL cannot be checkpointed past it, so it grows while a slow export runs.
 */
import type Database from 'better-sqlite3';
import type { ExportChunk, PlantFilter } from '../types.js';
import { openReadConnection } from './connection.js';
import { guarded } from './errors.js';
import { exportStatement } from './plant-find.js';

/**
 * Plants per chunk: a chunk costs one message between threads, and small ones keep memory flat; larger chunks
 * led V8 to pretenure every later one into the old generation (bench/README.md, "Import and export memory").
 */
const CHUNK = 500;
/** The export connection's page cache (KiB): it reads each page once, in id order; more would hold passed pages. */
const EXPORT_CACHE_KIB = 1024;

import { withoutAbsent, type PlantValues } from '../../domain/plant.js';

interface OpenExport {
  readonly db: Database.Database;
  readonly rows: IterableIterator<unknown>;
}

/** The exports running in one reader thread, by number. */
export class SqliteExports {
  private readonly running = new Map<number, OpenExport>();
  private last = 0;

  constructor(
    private readonly path: string,
    private readonly busyTimeoutMs: number,
  ) {}

  /** Opens an export's connection and starts its statement: the snapshot is taken with the first row read. */
  begin(filter: PlantFilter): number {
    const db = openReadConnection(this.path, this.busyTimeoutMs);
    try {
      db.pragma(`cache_size = -${EXPORT_CACHE_KIB}`);
      const { sql, parameters } = exportStatement(filter);
      const rows = guarded(() => db.prepare(sql()).safeIntegers(true).iterate(parameters));
      this.running.set(++this.last, { db, rows });
      return this.last;
    } catch (error) {
      db.close();
      throw error;
    }
  }

  /** The export's next plants, at most a chunk; none once it has ended (and its connection is closed). */
  next(id: number): ExportChunk {
    const running = this.running.get(id);
    if (running === undefined) return [];
    const chunk = [];
    try {
      for (let i = 0; i < CHUNK; i++) {
        const next = guarded(() => running.rows.next());
        if (next.done === true) break;
        chunk.push(withoutAbsent(next.value as PlantValues));
      }
    } catch (error) {
      this.end(id);
      throw error;
    }
    if (chunk.length < CHUNK) this.end(id);
    return chunk;
  }

  /** Ends an export early (its client went away): its statement and connection close. */
  end(id: number): void {
    const running = this.running.get(id);
    if (running === undefined) return;
    this.running.delete(id);
    running.rows.return?.();
    running.db.close();
  }

  /** The thread is stopping. */
  endAll(): void {
    for (const id of [...this.running.keys()]) this.end(id);
  }
}
