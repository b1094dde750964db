/**
 * Opening a connection with the settings every connection must share (pragmas are per connection). WAL with
 * synchronous=FULL fsyncs every commit, so a 200 survives power loss as well as kill -9.
 */
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { guarded } from './errors.js';

export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/** Page cache per connection, in KiB (SQLite's negative cache_size). */
const PAGE_CACHE_KIB = 8 * 1024;

/** Read and write for the service's user alone, whatever the umask: the store holds webhook signing secrets. */
export const STORE_FILE_MODE = 0o600;
/** A folder the service creates for a store (never one that exists: that one is the operator's to set). */
export const STORE_FOLDER_MODE = 0o700;

/**
 * Creates the store's folder and an empty file for it, private to the service's user, unless they exist. SQLite
 * creates the -wal and -shm files with the database file's permissions, so they are private too; left to SQLite,
 * the file itself would be 0644 under the usual umask of 022, readable by every local user.
 */
export function createPrivateFile(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: STORE_FOLDER_MODE });
  try {
    // 'wx': an existing file is not opened at all (it may be read-only: SQLite says so better than EACCES would).
    closeSync(openSync(path, 'wx', STORE_FILE_MODE));
  } catch (error) {
    if (!(error instanceof Error && 'code' in error && error.code === 'EEXIST')) throw error;
  }
}

export function openConnection(path: string, busyTimeoutMs: number): Database.Database {
  if (path !== ':memory:') createPrivateFile(path);
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
