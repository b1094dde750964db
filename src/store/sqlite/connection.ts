/**
 * Opening a connection to the store's file, with the settings every connection must
 * share: SQLite pragmas such as `synchronous` are per connection, so the writer
 * thread's connection needs them as much as the main one.
 *
 * Durability: WAL with synchronous=FULL, so every commit is fsync'd to the WAL before
 * it returns: a 200 survives kill -9 and power loss alike. (synchronous=NORMAL would
 * survive kill -9 but could lose the last commits on power loss.)
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { guarded } from './errors.js';

export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/** Page cache per connection, in KiB (SQLite's negative cache_size). */
const PAGE_CACHE_KIB = 8 * 1024;

export function openConnection(path: string, busyTimeoutMs: number): Database.Database {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = guarded(() => new Database(path));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  // Smaller than better-sqlite3's default: interior pages stay cached, missed leaves come from the OS cache,
  // and on a large store the default caches alone pushed the service past its memory target.
  db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
  return db;
}

/**
 * A reader thread's connection (reader-worker.ts): read-only, so no read can ever
 * write, with the same busy timeout and page cache. The file is in WAL mode already
 * (the main connection opened it first), which a read-only connection keeps.
 */
export function openReadConnection(path: string, busyTimeoutMs: number): Database.Database {
  const db = guarded(() => new Database(path, { readonly: true, fileMustExist: true }));
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
  return db;
}
