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

/** Plants per chunk: large enough that a chunk's overhead is small, small enough to stay a few hundred KB. */
const CHUNK = 2000;

type Row = [id: bigint, name: string, tag: string | null];

export async function* exportSqlitePlants(path: string, busyTimeoutMs: number, filter: PlantFilter): AsyncGenerator<ExportChunk> {
  const db = guarded(() => openConnection(path, busyTimeoutMs));
  try {
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
