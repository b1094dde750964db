/**
 * Imports on PostgreSQL: one pooled connection and ONE transaction. Chunks are staged as they arrive in a
 * temporary table no other session sees; apply inserts them in one statement (their change-log entries as one
 * span, migration 0014), finds the conflicting lines, and takes the span's positions right before COMMIT, so
 * the change counter every writer needs is held only for that step. A client that goes away or a service
 * that dies leaves nothing: without a commit the connection is closed, not returned to the pool.
 * A client stalling past IDLE_LIMIT between chunks loses its import.
 */
import type pg from 'pg';
import { PLANT_CREATED } from '../../domain/events.js';
import { plantColumnsSql, plantsDifferSql } from '../../domain/plant-sql.js';
import type { ImportConflict, ImportMode, ImportOutcome, ImportRow, PlantImport } from '../types.js';
import { guarded } from './errors.js';
import { ArrayInput } from './array-input.js';
import { NULLABLE_PLANT_INPUTS, PLANT_INPUT_TYPES, plantInput, type PlantInput } from './plant-input.js';
import { deliveriesOfEvent, PLANT_JSON_SQL } from './webhook-store.js';

/** One statement (a chunk, the commit) may take longer than the pool's limit for a request. */
const STATEMENT_LIMIT_MS = 3_600_000;
/** How long the import waits for its client's next chunk. */
const IDLE_LIMIT = '60s';

/** A Standard Webhooks message id, msg_ + 128 bits in base64url, as newEventId makes in JS. */
const MESSAGE_ID_SQL = "'msg_' || rtrim(translate(encode(uuid_send(gen_random_uuid()), 'base64'), '+/', '-_'), '=')";

/** A staged line: its plant as plants stores it, and its line number (decimal text). */
type StagedInput = PlantInput & { readonly line: string };
const STAGED = new ArrayInput<StagedInput>({ line: 'int8', ...PLANT_INPUT_TYPES });
/** The plant's columns of a staged line. */
const PLANT_COLUMNS = new ArrayInput<PlantInput>(PLANT_INPUT_TYPES).columns();

/** Dropped at the end of the transaction, whichever way it ends (and with the session, if that goes first). */
const CREATE_STAGING = `CREATE TEMP TABLE import_rows (${STAGED.definitions(NULLABLE_PLANT_INPUTS)}) ON COMMIT DROP`;

const STAGE_CHUNK = `INSERT INTO import_rows (${STAGED.columns()}) SELECT * FROM ${STAGED.unnest('i')}`;

/**
 * The staged plants, as create's batches insert them: the first line of an id wins, in id order so concurrent
 * writers lock overlapping ids in one order; events only for inserted rows. Change-log entries go into the
 * import's span ($2) instead of the insert trigger (skipped via plantstore.change_log, set by apply).
 */
const INSERT_STAGED = `
  WITH inserted AS (
    INSERT INTO plants (${PLANT_COLUMNS})
    SELECT ${PLANT_COLUMNS} FROM import_rows ORDER BY id, line
    ON CONFLICT (id) DO NOTHING RETURNING ${plantColumnsSql()}
  ), logged AS (
    INSERT INTO plant_change_span_entries (span, k, type, plant_id, tag, payload)
    SELECT $2::int8, row_number() OVER (ORDER BY id), '${PLANT_CREATED}', id, tag, ${PLANT_JSON_SQL} FROM inserted
  ), event AS (
    INSERT INTO webhook_events (id, type, payload, created_at, tag)
    SELECT ${MESSAGE_ID_SQL}, '${PLANT_CREATED}', ${PLANT_JSON_SQL}, $1::timestamptz, tag FROM inserted
    WHERE EXISTS (SELECT 1 FROM webhook_subscriptions WHERE '${PLANT_CREATED}' = ANY(event_types))
    RETURNING id, tag, previous_tag
  ), ${deliveriesOfEvent(PLANT_CREATED, '$1')}
  SELECT count(*)::int AS created FROM inserted`;

/**
 * The first lines (by line) whose id now holds other content (not samePlant): stored before, or
 * created by an earlier line; each row also carries how many there are in all.
 */
const CONFLICTS = `
  SELECT i.line, i.id, count(*) OVER () AS total FROM import_rows i JOIN plants p ON p.id = i.id
  WHERE ${plantsDifferSql('postgres', 'p', 'i')} ORDER BY i.line LIMIT $1`;

/**
 * The span's $2 positions, after the last one taken: the counter's row lock, held
 * from here to COMMIT, orders positions by commit as the trigger's do (migration
 * 0009), and the notification tells every instance's streams at commit.
 */
const TAKE_POSITIONS = `
  WITH counter AS (
    UPDATE plant_change_counter SET last = last + $2::int8 RETURNING last
  ), span AS (
    INSERT INTO plant_change_spans (span, first_position, last_position) SELECT $1::int8, last - $2::int8 + 1, last FROM counter
  )
  SELECT pg_notify('plant_changes', last::text) FROM counter`;

function stagedValues(rows: readonly ImportRow[]): unknown[] {
  return STAGED.values(rows.map(({ line, ...plant }) => ({ ...plantInput(plant), line: String(line) })));
}

export class PostgresPlantImport implements PlantImport {
  private staged = 0;
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
      await started.query(CREATE_STAGING);
    } catch (error) {
      await started.abort();
      throw error;
    }
    return started;
  }

  async stage(rows: readonly ImportRow[]): Promise<void> {
    await this.query(STAGE_CHUNK, stagedValues(rows));
    this.staged += rows.length;
  }

  async apply(mode: ImportMode, reportLimit: number): Promise<ImportOutcome> {
    await this.query("SET LOCAL plantstore.change_log = 'span'");
    const { rows: spans } = await this.query<{ span: bigint }>("SELECT nextval('plant_change_span_ids') AS span");
    const span = spans[0]?.span ?? 0n;
    const { rows: inserted } = await this.query<{ created: number }>(INSERT_STAGED, [new Date(), span.toString()]);
    const created = inserted[0]?.created ?? 0;
    const { conflicts, conflictCount } = await this.conflicts(reportLimit);
    if (mode === 'all' && conflictCount > 0) {
      await this.abort();
      return { kind: 'rejected', conflicts, conflictCount };
    }
    if (created > 0) await this.query(TAKE_POSITIONS, [span.toString(), created]);
    await this.query('COMMIT');
    this.ended = true;
    this.client.release();
    this.onEnd();
    return { kind: 'applied', created, unchanged: this.staged - created - conflictCount, conflicts, conflictCount };
  }

  async abort(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    // Closing the session rolls back whatever is open, whatever state it is in.
    this.client.release(true);
    this.onEnd();
  }

  /** The first `limit` conflicts, and their count (read with at least one row, which carries it). */
  private async conflicts(limit: number): Promise<{ conflicts: ImportConflict[]; conflictCount: number }> {
    const { rows } = await this.query<{ line: bigint; id: bigint; total: bigint }>(CONFLICTS, [Math.max(limit, 1)]);
    const conflicts = rows.slice(0, limit).map(({ line, id }) => ({ line: Number(line), id }));
    return { conflicts, conflictCount: Number(rows[0]?.total ?? 0n) };
  }

  private query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> {
    return guarded(() => this.client.query<R>({ text, values, query_timeout: STATEMENT_LIMIT_MS } as pg.QueryConfig));
  }
}
