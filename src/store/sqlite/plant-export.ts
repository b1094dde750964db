/**
 * Exports on SQLite: a connection of the export's own, holding one read
 * transaction from the first chunk to the last. In WAL mode that transaction is a
 * snapshot: writes that commit meanwhile (the writer thread keeps writing) are not
 * seen, and the export never blocks them. Its own connection, because
 * better-sqlite3 runs one statement at a time per connection and the main one
 * serves every other read in between two chunks.
 *
 * A snapshot held open keeps the WAL from being checkpointed past it, so the WAL
 * grows while a slow export runs (docs/bulk.md).
 */
import type { ExportChunk, PlantFilter } from '../types.js';
import { openConnection } from './connection.js';
import { guarded } from './errors.js';
import { exportChunkStatement } from './plant-find.js';

/**
 * Plants per chunk. A chunk's overhead here is one index seek, so small chunks cost
 * little, and they keep the export's memory flat: a chunk's plants are alive while
 * the route writes them, and with 2,000 per chunk V8 sometimes judged them
 * long-lived and allocated every later one straight into the old generation, where
 * a million plants' garbage waited for a full collection (bench/README.md, "Import and export
 * memory").
 */
const CHUNK = 500;
/**
 * The export connection's page cache, in KiB: it reads each page of the table once,
 * in id order, so a larger cache would only hold pages it has passed (the usual
 * 8 MB filled up during a large export, in the service's memory).
 */
const EXPORT_CACHE_KIB = 1024;

type Row = [id: bigint, name: string, tag: string | null];

export async function* exportSqlitePlants(path: string, busyTimeoutMs: number, filter: PlantFilter): AsyncGenerator<ExportChunk> {
  const db = guarded(() => openConnection(path, busyTimeoutMs));
  try {
    db.pragma(`cache_size = -${EXPORT_CACHE_KIB}`);
    // Two shapes: the first chunk's, and the rest's (after the last id).
    const statements = new Map<string, ReturnType<typeof db.prepare>>();
    db.exec('BEGIN');
    let after: bigint | undefined;
    for (;;) {
      const { key, sql, parameters } = exportChunkStatement(filter, after, CHUNK);
      const statement = statements.get(key) ?? db.prepare(sql()).safeIntegers(true).raw(true);
      statements.set(key, statement);
      const rows = guarded(() => statement.all(parameters)) as Row[];
      if (rows.length === 0) return;
      yield rows.map(([id, name, tag]) => (tag === null ? { id, name } : { id, name, tag }));
      if (rows.length < CHUNK) return;
      after = (rows.at(-1) as Row)[0];
    }
  } finally {
    db.close();
  }
}
