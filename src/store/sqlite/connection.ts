/**
 * Opening a connection with the settings every connection must share (pragmas are per connection). WAL with
 * synchronous=FULL fsyncs every commit, so a 200 survives power loss as well as kill -9.
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
