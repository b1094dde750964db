/**
 * The change log on PostgreSQL (migration 0009). Reads go through the pool; the
 * signal is LISTEN plant_changes on a connection of its own, opened while anyone
 * watches: the triggers NOTIFY at commit, so every instance hears of a change any
 * instance made. A notification can be missed while that connection is down, so it
 * is reopened after a pause and, once listening again, fires the listeners once
 * (they read the log and find whatever they missed).
 */
import pg from 'pg';
import type { ChangeLog, ChangeLogBounds, PlantChangeEntry } from '../types.js';
import { guarded } from './errors.js';
import { clientConfig, type PostgresConnectionSettings } from './pool.js';

const CHANNEL = 'plant_changes';
const RECONNECT_AFTER_MS = 1000;

const ENTRIES_AFTER = {
  name: 'changes.after',
  text: `SELECT position, type, plant_id AS "plantId", tag, payload,
           CASE WHEN tag_changed THEN previous_tag END AS "previousTag", tag_changed AS "tagChanged"
         FROM plant_changes WHERE position > $1::int8 ORDER BY position LIMIT $2`,
};
const BOUNDS = {
  name: 'changes.bounds',
  // The history id mixes in the table's OID, which a pg_restore changes (migration 0012).
  text: `SELECT (SELECT last FROM plant_change_counter) AS last, (SELECT min(position) FROM plant_changes) AS oldest,
           (SELECT left(md5(history || ':' || 'plant_change_history'::regclass::oid::text), 16)
            FROM plant_change_history) AS history`,
};
const PRUNE = {
  name: 'changes.prune',
  text: 'DELETE FROM plant_changes WHERE position IN (SELECT position FROM plant_changes WHERE created_at < $1 ORDER BY position LIMIT $2)',
};

/** A row as read: previousTag counts only where tagChanged. */
type EntryRow = Omit<PlantChangeEntry, 'previousTag'> & { readonly previousTag: string | null; readonly tagChanged: boolean };

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

  async prune(before: Date, limit: number): Promise<number> {
    return guarded(async () => (await this.pool.query({ ...PRUNE, values: [before, limit] })).rowCount ?? 0);
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
    const client = new pg.Client(clientConfig(this.settings));
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
