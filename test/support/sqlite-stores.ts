/** SQLite store files in tests: filled through the store's API, copied as `plantstore copy` copies. */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { copyBetween, type CopyOptions, type CopyReport } from '../../src/store/copy/copy-store.js';
import { openSource, openTarget } from '../../src/store/copy/open-endpoints.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from './temp.js';

/** Runs `work` on the store at `path`, opened for it and closed after. */
export async function withSqliteStore<T>(path: string, work: (store: SqliteStore) => Promise<T>): Promise<T> {
  const store = SqliteStore.open({ path });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/** Copies the store at `from` into the one at `to`. */
export async function copySqliteStore(from: string, to: string, options: CopyOptions): Promise<CopyReport> {
  const [source, target] = [await openSource(`sqlite:${from}`), await openTarget(`sqlite:${to}`)];
  try {
    return await copyBetween(source, target, options);
  } finally {
    await target.close();
    await source.close();
  }
}

/** A freshly migrated, empty store file, opened read-only on a connection of its own (to look at plans). */
export async function migratedReadOnly(): Promise<Database.Database> {
  const path = join(tempDir(), 'plantstore.db');
  await SqliteStore.open({ path }).close();
  return new Database(path, { readonly: true });
}
