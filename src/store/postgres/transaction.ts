import type pg from 'pg';
import { guarded } from './errors.js';

/**
 * Runs `work` in a transaction on one connection of `pool`, its failures translated as every store statement's are.
 * A connection whose ROLLBACK failed is destroyed rather than returned to the pool in an unknown state.
 */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return guarded(async () => {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
      throw error;
    } finally {
      client.release(broken);
    }
  });
}
