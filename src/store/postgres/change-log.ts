/**
 * The change log on PostgreSQL (migration 0009). Reads go through the pool; the signal is LISTEN plant_changes
 * on a connection of its own while anyone watches, as the triggers NOTIFY every instance at commit. A
 * notification may be missed while that connection is down, so once listening again it fires the listeners
 * once (they read the log and catch up).
 */
import pg from 'pg';
import type { ChangeLog, ChangeLogBounds, PlantChangeEntry } from '../types.js';
import { guarded } from './errors.js';
import { clientConfig, type PostgresConnectionSettings } from './pool.js';

const CHANNEL = 'plant_changes';
const RECONNECT_AFTER_MS = 1000;

/**
 * The log is plant_changes (one row per entry, written by the triggers) and the
 * imports' spans (migration 0014: the entry numbered k of a span is at position
 * first_position + k - 1): each part is read in position order, then merged.
 */
const ENTRIES_AFTER = {
  name: 'changes.after',
  text: `
    SELECT * FROM (
      (SELECT position, type, plant_id AS "plantId", tag, payload,
          CASE WHEN tag_changed THEN previous_tag END AS "previousTag", tag_changed AS "tagChanged"
        FROM plant_changes WHERE position > $1::int8 ORDER BY position LIMIT $2)
      UNION ALL
      (SELECT s.first_position + e.k - 1, e.type, e.plant_id, e.tag, e.payload, NULL, false
        FROM (SELECT span, first_position FROM plant_change_spans WHERE last_position > $1::int8 ORDER BY first_position LIMIT $2) s
        CROSS JOIN LATERAL (
          SELECT k, type, plant_id, tag, payload FROM plant_change_span_entries
          WHERE span = s.span AND k > $1::int8 - s.first_position + 1 ORDER BY k LIMIT $2
        ) e
        ORDER BY s.first_position, e.k LIMIT $2)
    ) entries ORDER BY position LIMIT $2`,
};
const BOUNDS = {
  name: 'changes.bounds',
  // The history id mixes in the table's OID, which a pg_restore changes (migration 0012).
  text: `SELECT (SELECT last FROM plant_change_counter) AS last, least(
      (SELECT min(position) FROM plant_changes),
      (SELECT min(s.first_position + (SELECT min(k) FROM plant_change_span_entries e WHERE e.span = s.span) - 1) FROM plant_change_spans s)
    ) AS oldest,
    (SELECT left(md5(history || ':' || 'plant_change_history'::regclass::oid::text), 16) FROM plant_change_history) AS history`,
};
/** The first position written at or after a time (so not to be pruned before it), if any. */
const FIRST_YOUNG = {
  name: 'changes.first-young',
  text: `SELECT least(
      (SELECT min(position) FROM plant_changes WHERE created_at >= $1),
      (SELECT min(first_position) FROM plant_change_spans WHERE created_at >= $1)
    ) AS position`,
};
/**
 * Deletes every entry up to a position, in one statement, so that the log stays a
 * run of consecutive positions (a reader never finds a later entry gone and an
 * earlier one kept); a span goes once none of its entries is left.
 */
const PRUNE_THROUGH = {
  name: 'changes.prune-through',
  text: `
    WITH plain AS (
      DELETE FROM plant_changes WHERE position <= $1::int8 RETURNING 1
    ), spanned AS (
      DELETE FROM plant_change_span_entries e USING plant_change_spans s
      WHERE e.span = s.span AND s.first_position <= $1::int8 AND e.k <= $1::int8 - s.first_position + 1 RETURNING 1
    ), spans AS (
      DELETE FROM plant_change_spans WHERE last_position <= $1::int8
    )
    SELECT (SELECT count(*) FROM plain) + (SELECT count(*) FROM spanned) AS deleted`,
};

/** A row as read: previousTag counts only where tagChanged. */
type EntryRow = Omit<PlantChangeEntry, 'previousTag'> & {
  readonly previousTag: string | null;
  readonly tagChanged: boolean;
};

export class PostgresChangeLog implements ChangeLog {
  private readonly listeners = new Set<() => void>();
  private listening: pg.Client | undefined;
  private reconnect: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly settings: PostgresConnectionSettings,
    private readonly onBackgroundError: (error: Error) => void,
  ) {}

  async after(position: bigint, limit: number): Promise<PlantChangeEntry[]> {
    const query = { ...ENTRIES_AFTER, values: [position.toString(), limit] };
    const rows = await guarded(async () => (await this.pool.query<EntryRow>(query)).rows);
    return rows.map(({ tagChanged, previousTag, ...entry }) => (tagChanged ? { ...entry, previousTag } : entry));
  }

  async bounds(): Promise<ChangeLogBounds> {
    type Row = { last: bigint; oldest: bigint | null; history: string };
    const row = await guarded(async () => (await this.pool.query<Row>(BOUNDS)).rows[0]);
    return { history: row?.history ?? '', last: row?.last ?? 0n, oldest: row?.oldest ?? undefined };
  }

  /**
   * The oldest entries, up to `limit`, while they are older than `before`: positions
   * are taken at commit, but an entry's time is its transaction's start, so an import
   * can be older than entries before it; pruning stops at the first younger entry.
   */
  async prune(before: Date, limit: number): Promise<number> {
    return guarded(async () => {
      const { oldest } = await this.bounds();
      if (oldest === undefined) return 0;
      const young =
        (await this.pool.query<{ position: bigint | null }>({ ...FIRST_YOUNG, values: [before] })).rows[0]?.position ??
        null;
      const old = (await this.after(oldest - 1n, limit)).filter((entry) => young === null || entry.position < young);
      const through = old.at(-1)?.position;
      if (through === undefined) return 0;
      const { rows } = await this.pool.query<{ deleted: bigint }>({ ...PRUNE_THROUGH, values: [through.toString()] });
      return Number(rows[0]?.deleted ?? 0n);
    });
  }

  watch(listener: () => void): () => void {
    this.listeners.add(listener);
    if (this.listening === undefined && this.reconnect === undefined) void this.listen();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stopListening();
    };
  }

  /** Stops listening for good (the store is closing). */
  close(): void {
    this.closed = true;
    this.stopListening();
  }

  private fire(): void {
    for (const listener of this.listeners) listener();
  }

  private async listen(): Promise<void> {
    if (this.closed || this.listeners.size === 0) return;
    // A session of its own: DATABASE_LISTEN_URL when the pool goes through a transaction pooler.
    const client = new pg.Client(clientConfig(this.settings, this.settings.listenUrl));
    this.listening = client;
    const retry = (error: Error) => {
      if (this.listening !== client) return;
      this.onBackgroundError(error);
      this.listening = undefined;
      void client.end().catch(() => {});
      this.reconnect = setTimeout(() => {
        this.reconnect = undefined;
        void this.listen();
      }, RECONNECT_AFTER_MS);
      this.reconnect.unref();
    };
    client.on('error', retry);
    client.on('end', () => retry(new Error('the LISTEN connection for the change stream ended')));
    client.on('notification', () => this.fire());
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      // Anything committed while not listening is in the log: let the listeners look.
      this.fire();
    } catch (error) {
      retry(error as Error);
    }
  }

  private stopListening(): void {
    clearTimeout(this.reconnect);
    this.reconnect = undefined;
    const client = this.listening;
    this.listening = undefined;
    void client?.end().catch(() => {});
  }
}
