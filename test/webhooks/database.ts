/** Runs SQL directly on a test store's database (to break it on purpose, or to look at its rows). */
import Database from 'better-sqlite3';
import { withAdminClient } from '../support/postgres.js';

export async function execSql(databaseUrl: string, sql: { sqlite: string; postgres: string }): Promise<void> {
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new Database(databaseUrl.slice('sqlite:'.length));
    try {
      db.exec(sql.sqlite);
    } finally {
      db.close();
    }
    return;
  }
  await withAdminClient(async (client) => void (await client.query(sql.postgres)), databaseUrl);
}

/** The first column of every row a query (valid on both stores) returns. */
export async function selectColumn(databaseUrl: string, sql: string): Promise<unknown[]> {
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new Database(databaseUrl.slice('sqlite:'.length), { readonly: true });
    try {
      return db.prepare(sql).pluck().all();
    } finally {
      db.close();
    }
  }
  return withAdminClient(
    async (client) => (await client.query({ text: sql, rowMode: 'array' })).rows.map((row: unknown[]) => row[0]),
    databaseUrl,
  );
}
