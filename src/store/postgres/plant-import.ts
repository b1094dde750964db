/**
 * Imports on PostgreSQL: one connection of the pool for the whole import, staging
 * its rows in a TEMP table of that session (no WAL, invisible to every other
 * session, gone with the session: an import abandoned or cut by a crash leaves
 * nothing), then applying them in ONE transaction with the same rules as a batch
 * of creates. Staging is autocommit, so a slow upload holds no transaction open.
 *
 * The connection is closed, not returned to the pool, when the import ends: that
 * drops the temp table whatever happened.
 */
import type pg from 'pg';
import { PLANT_CREATED } from '../../domain/events.js';
import { findColumns } from '../../domain/search-text.js';
import type { ImportConflict, ImportMode, ImportOutcome, ImportRow, PlantImport } from '../types.js';
import { guarded } from './errors.js';
import { deliveriesOfEvent, PLANT_JSON_SQL } from './webhook-store.js';

/** Applying a large import runs longer than the pool's statement limit allows a request. */
const APPLY_TIMEOUT_MS = 3_600_000;

/** A Standard Webhooks message id, msg_ + 128 bits in base64url, as newEventId makes in JS. */
const MESSAGE_ID_SQL = "'msg_' || rtrim(translate(encode(uuid_send(gen_random_uuid()), 'base64'), '+/', '-_'), '=')";

/**
 * The first line of each id wins (ORDER BY id, line; DO NOTHING skips later rows of
 * an id inserted by the same statement); versions come from the column's sequence.
 * Events are written for exactly the inserted rows, when somebody subscribed.
 */
const APPLY_SQL = `
  WITH inserted AS (
    INSERT INTO plants (id, name, tag, name_key, name_words, tag_words)
    SELECT id, name, tag, name_key, name_words, tag_words FROM plant_import ORDER BY id, line
    ON CONFLICT (id) DO NOTHING RETURNING id, name, tag
  ), event AS (
    INSERT INTO webhook_events (id, type, payload, created_at)
    SELECT ${MESSAGE_ID_SQL}, '${PLANT_CREATED}', ${PLANT_JSON_SQL}, $1::timestamptz FROM inserted
    WHERE EXISTS (SELECT 1 FROM webhook_subscriptions WHERE '${PLANT_CREATED}' = ANY(event_types))
    RETURNING id
  ), ${deliveriesOfEvent(PLANT_CREATED, '$1')}
  SELECT count(*)::int AS created FROM inserted`;

/** Lines whose id now holds another name or tag (stored before, or created by an earlier line). */
const CONFLICTS_FROM = 'FROM plant_import s JOIN plants p ON p.id = s.id WHERE p.name <> s.name OR p.tag IS DISTINCT FROM s.tag';

export class PostgresPlantImport implements PlantImport {
  private staged = 0;
  private released = false;

  private constructor(private readonly client: pg.PoolClient) {}

  static async begin(pool: pg.Pool): Promise<PostgresPlantImport> {
    const client = await guarded(() => pool.connect());
    try {
      await guarded(() =>
        client.query(`CREATE TEMP TABLE plant_import (line int8 PRIMARY KEY, id int8 NOT NULL, name text NOT NULL, tag text,
          name_key text NOT NULL, name_words text NOT NULL, tag_words text NOT NULL)`),
      );
    } catch (error) {
      client.release(true);
      throw error;
    }
    return new PostgresPlantImport(client);
  }

  async stage(rows: readonly ImportRow[]): Promise<void> {
    const columns: [string[], string[], string[], (string | null)[], string[], string[], string[]] = [[], [], [], [], [], [], []];
    for (const row of rows) {
      const find = findColumns(row.name, row.tag);
      columns[0].push(String(row.line));
      columns[1].push(row.id.toString());
      columns[2].push(row.name);
      columns[3].push(row.tag);
      columns[4].push(find.nameKey);
      columns[5].push(find.nameWords);
      columns[6].push(find.tagWords);
    }
    await this.query(
      'INSERT INTO plant_import SELECT * FROM unnest($1::int8[], $2::int8[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])',
      columns,
    );
    this.staged += rows.length;
  }

  async apply(mode: ImportMode, reportLimit: number): Promise<ImportOutcome> {
    try {
      // Without statistics the planner guesses the temp table's size, for the conflict join.
      await this.query('ANALYZE plant_import');
      await this.query('BEGIN');
      await this.query(`SET LOCAL statement_timeout = ${APPLY_TIMEOUT_MS}`);
      const { rows } = await this.query<{ created: number }>(APPLY_SQL, [new Date()]);
      const created = rows[0]?.created ?? 0;
      const { conflicts, conflictCount } = created === this.staged ? { conflicts: [], conflictCount: 0 } : await this.conflicts(reportLimit);
      if (mode === 'all' && conflictCount > 0) {
        await this.query('ROLLBACK');
        return { kind: 'rejected', conflicts, conflictCount };
      }
      await this.query('COMMIT');
      return { kind: 'applied', created, unchanged: this.staged - created - conflictCount, conflicts, conflictCount };
    } finally {
      await this.abort();
    }
  }

  async abort(): Promise<void> {
    if (this.released) return;
    this.released = true;
    // Closing the session drops the temp table and rolls back anything left open.
    this.client.release(true);
  }

  private async conflicts(reportLimit: number): Promise<{ conflicts: ImportConflict[]; conflictCount: number }> {
    const count = await this.query<{ count: number }>(`SELECT count(*)::int AS count ${CONFLICTS_FROM}`);
    const { rows } = await this.query<{ line: bigint; id: bigint }>(`SELECT s.line, s.id ${CONFLICTS_FROM} ORDER BY s.line LIMIT $1`, [reportLimit]);
    return { conflicts: rows.map((row) => ({ line: Number(row.line), id: row.id })), conflictCount: count.rows[0]?.count ?? 0 };
  }

  private query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> {
    return guarded(() => this.client.query<R>({ text, values, query_timeout: APPLY_TIMEOUT_MS } as pg.QueryConfig));
  }
}
