/** Runs SQL directly on a test store's database (to break it on purpose). */
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
