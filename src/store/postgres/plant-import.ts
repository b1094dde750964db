/**
 * Imports on PostgreSQL: one connection of the pool and ONE transaction for the
 * whole import, each chunk inserted as it arrives (while the next is read), with
 * the same rules as a batch of creates. Nothing is visible to others until the
 * commit at the end, and a client that goes away, or a service that dies, leaves
 * nothing: the transaction never commits (the connection is closed, not returned
 * to the pool, whenever the import does not end in a commit).
 *
 * Holding the transaction while the body streams in costs other writers little on
 * PostgreSQL: they are blocked only on the ids the import has inserted, until it
 * commits. A client that stalls for longer than IDLE_LIMIT between two chunks loses
 * its import (the server ends the idle transaction).
 */
import type pg from 'pg';
import { PLANT_CREATED } from '../../domain/events.js';
import { findColumns } from '../../domain/search-text.js';
import type { ImportConflict, ImportMode, ImportOutcome, ImportRow, PlantImport } from '../types.js';
import { guarded } from './errors.js';
import { deliveriesOfEvent, PLANT_JSON_SQL } from './webhook-store.js';

/** One statement (a chunk, the commit) may take longer than the pool's limit for a request. */
const STATEMENT_LIMIT_MS = 3_600_000;
/** Conflicts kept for the report (apply asks for its first few; the route, 1,000): the rest are only counted. */
const KEPT_CONFLICTS = 10_000;
/** How long the import waits for its client's next chunk. */
const IDLE_LIMIT = '60s';

/** A Standard Webhooks message id, msg_ + 128 bits in base64url, as newEventId makes in JS. */
const MESSAGE_ID_SQL = "'msg_' || rtrim(translate(encode(uuid_send(gen_random_uuid()), 'base64'), '+/', '-_'), '=')";

const INPUT = `SELECT * FROM unnest($1::int8[], $2::int8[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
  AS i(line, id, name, tag, name_key, name_words, tag_words)`;

/**
 * A chunk's insert: the first line of an id wins (ORDER BY id, line; DO NOTHING
 * skips an id inserted before, by this import or anyone); versions come from the
 * column's sequence; events are written for exactly the inserted rows, when
 * somebody subscribed, as create's insert does.
 */
const INSERT_CHUNK = `
  WITH input AS (${INPUT}), inserted AS (
    INSERT INTO plants (id, name, tag, name_key, name_words, tag_words)
    SELECT id, name, tag, name_key, name_words, tag_words FROM input ORDER BY id, line
    ON CONFLICT (id) DO NOTHING RETURNING id, name, tag
  ), event AS (
    INSERT INTO webhook_events (id, type, payload, created_at)
    SELECT ${MESSAGE_ID_SQL}, '${PLANT_CREATED}', ${PLANT_JSON_SQL}, $8::timestamptz FROM inserted
    WHERE EXISTS (SELECT 1 FROM webhook_subscriptions WHERE '${PLANT_CREATED}' = ANY(event_types))
    RETURNING id
  ), ${deliveriesOfEvent(PLANT_CREATED, '$8')}
  SELECT count(*)::int AS created FROM inserted`;

/** The chunk's lines whose id now holds another name or tag: stored before, or created by an earlier line. */
const CHUNK_CONFLICTS = `
  WITH input AS (${INPUT})
  SELECT input.line, input.id FROM input JOIN plants p ON p.id = input.id
  WHERE p.name <> input.name OR p.tag IS DISTINCT FROM input.tag ORDER BY input.line`;

type Columns = [lines: string[], ids: string[], names: string[], tags: (string | null)[], nameKeys: string[], nameWords: string[], tagWords: string[]];

function columnsOf(rows: readonly ImportRow[]): Columns {
  const columns: Columns = [[], [], [], [], [], [], []];
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
  return columns;
}

export class PostgresPlantImport implements PlantImport {
  private staged = 0;
  private created = 0;
  private conflictCount = 0;
  /** The first conflicts, by line (chunks come in line order): as many as apply will report. */
  private readonly conflicts: ImportConflict[] = [];
  private ended = false;

  private constructor(
    private readonly client: pg.PoolClient,
    /** Called once the import has ended, whichever way. */
    private readonly onEnd: () => void,
  ) {}

  static async begin(pool: pg.Pool, onEnd: () => void = () => {}): Promise<PostgresPlantImport> {
    const client = await guarded(() => pool.connect());
    const started = new PostgresPlantImport(client, onEnd);
    try {
      await started.query('BEGIN');
      await started.query(`SET LOCAL idle_in_transaction_session_timeout = '${IDLE_LIMIT}'`);
      await started.query(`SET LOCAL statement_timeout = ${STATEMENT_LIMIT_MS}`);
    } catch (error) {
      await started.abort();
      throw error;
    }
    return started;
  }

  async stage(rows: readonly ImportRow[]): Promise<void> {
    const columns = columnsOf(rows);
    const { rows: result } = await this.query<{ created: number }>(INSERT_CHUNK, [...columns, new Date()]);
    const created = result[0]?.created ?? 0;
    this.staged += rows.length;
    this.created += created;
    if (created === rows.length) return;
    const { rows: conflicts } = await this.query<{ line: bigint; id: bigint }>(CHUNK_CONFLICTS, columns);
    this.conflictCount += conflicts.length;
    for (const { line, id } of conflicts.slice(0, KEPT_CONFLICTS - this.conflicts.length)) this.conflicts.push({ line: Number(line), id });
  }

  async apply(mode: ImportMode, reportLimit: number): Promise<ImportOutcome> {
    const conflicts = this.conflicts.slice(0, reportLimit);
    if (mode === 'all' && this.conflictCount > 0) {
      await this.abort();
      return { kind: 'rejected', conflicts, conflictCount: this.conflictCount };
    }
    await this.query('COMMIT');
    this.ended = true;
    this.client.release();
    this.onEnd();
    return { kind: 'applied', created: this.created, unchanged: this.staged - this.created - this.conflictCount, conflicts, conflictCount: this.conflictCount };
  }

  async abort(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    // Closing the session rolls back whatever is open, whatever state it is in.
    this.client.release(true);
    this.onEnd();
  }

  private query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> {
    return guarded(() => this.client.query<R>({ text, values, query_timeout: STATEMENT_LIMIT_MS } as pg.QueryConfig));
  }
}
