/**
 * Reads what the store holds, straight from the database (not through the
 * service under test), and compares it with what the clients were told.
 */
import Database from 'better-sqlite3';
import { withAdminClient } from '../support/postgres.js';
import type { LoadLedger, SentPlant } from './create-load.js';

export interface StoredRow {
  readonly id: string;
  readonly name: string;
  readonly tag: string | null;
}

export interface StoreSnapshot {
  readonly rows: StoredRow[];
  /** SQLite's PRAGMA integrity_check result ('ok' when sound); PostgreSQL: 'not applicable'. */
  readonly integrity: string;
}

export async function snapshotStore(databaseUrl: string): Promise<StoreSnapshot> {
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new Database(databaseUrl.slice('sqlite:'.length), { readonly: true });
    try {
      const integrity = (db.pragma('integrity_check') as { integrity_check: string }[])
        .map((r) => r.integrity_check)
        .join('; ');
      const rows = db.prepare('SELECT CAST(id AS TEXT) AS id, name, tag FROM plants').all() as StoredRow[];
      return { rows, integrity };
    } finally {
      db.close();
    }
  }
  const rows = await withAdminClient(
    async (client) => (await client.query<StoredRow>('SELECT id::text AS id, name, tag FROM plants')).rows,
    databaseUrl,
  );
  return { rows, integrity: 'not applicable' };
}

const same = (row: StoredRow, plant: SentPlant) => row.name === plant.name && (row.tag ?? undefined) === plant.tag;

/** Everything wrong with the store, given what the clients sent and were told (empty when sound). */
export function auditStore(snapshot: StoreSnapshot, ledger: LoadLedger): string[] {
  const problems: string[] = [];
  if (snapshot.integrity !== 'ok' && snapshot.integrity !== 'not applicable')
    problems.push(`integrity_check: ${snapshot.integrity}`);
  const byId = new Map(snapshot.rows.map((row) => [row.id, row]));
  for (const plant of ledger.acknowledged.values()) {
    const row = byId.get(plant.id);
    if (row === undefined) problems.push(`acknowledged plant ${plant.id} is missing`);
    else if (!same(row, plant))
      problems.push(`acknowledged plant ${plant.id} stored as ${JSON.stringify(row)}, sent ${JSON.stringify(plant)}`);
  }
  for (const row of snapshot.rows) {
    const sent = ledger.attempted.get(row.id);
    if (sent === undefined) problems.push(`row ${row.id} was never sent by a client`);
    else if (!same(row, sent))
      problems.push(`row ${row.id} is ${JSON.stringify(row)}, but the client sent ${JSON.stringify(sent)}`);
  }
  return problems;
}
