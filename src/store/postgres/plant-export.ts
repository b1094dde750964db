/**
 * Exports on PostgreSQL: one pooled connection holding one REPEATABLE READ transaction, so every keyset chunk
 * reads one snapshot, each fetched when the consumer asks. The pool's idle-in-transaction limit (meant for
 * bugs) is lifted to EXPORT_IDLE_LIMIT while the client reads between chunks (docs/bulk.md).
 */
import type pg from 'pg';
import { withoutAbsent, type PlantValues } from '../../domain/plant.js';
import type { ExportChunk, PlantFilter } from '../types.js';
import { guarded } from './errors.js';
import { exportChunkStatement } from './plant-page.js';

/**
 * Plants per chunk: larger chunks outlive young collections and get promoted, past the memory target
 * (bench/README.md, "PostgreSQL's export memory").
 */
const CHUNK = 1000;
const EXPORT_IDLE_LIMIT = '10min';

export async function* exportPostgresPlants(pool: pg.Pool, filter: PlantFilter): AsyncGenerator<ExportChunk> {
  const client = await guarded(() => pool.connect());
  let failure: Error | undefined;
  try {
    await guarded(() => client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY'));
    await guarded(() => client.query(`SET LOCAL idle_in_transaction_session_timeout = '${EXPORT_IDLE_LIMIT}'`));
    let after: bigint | undefined;
    for (;;) {
      const { rows } = await guarded(() => client.query<PlantValues>(exportChunkStatement(filter, after, CHUNK)));
      if (rows.length === 0) break;
      yield rows.map(withoutAbsent);
      if (rows.length < CHUNK) break;
      after = (rows.at(-1) as PlantValues).id;
    }
  } catch (error) {
    failure = error as Error;
    throw error;
  } finally {
    // Ended early or not, the snapshot is let go; a connection that failed is not reused.
    if (failure === undefined) await client.query('ROLLBACK').catch((error: Error) => (failure = error));
    client.release(failure);
  }
}
