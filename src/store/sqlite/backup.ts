/**
 * `plantstore backup` and `plantstore restore` for the SQLite store.
 *
 * Backup runs SQLite's online backup API in ONE step (one read transaction, a WAL snapshot) from a fresh
 * read-only connection while the service keeps writing: a chunked copy starts over whenever another
 * connection commits, so under steady writes it would never finish. Meanwhile the -wal file grows.
 *
 * Both commands write to a temporary file beside the destination, switch it to journal_mode=DELETE (one
 * self-contained file), check it (quick_check, schema_migrations), fsync and rename it: a crash leaves the
 * old file or the new one whole.
 *
 * Replacing a file needs it unused. In WAL mode an open connection, even idle, holds a SHARED lock, so a
 * connection in locking_mode=EXCLUSIVE switching to journal_mode=DELETE fails with SQLITE_BUSY while anyone
 * has the store open (BEGIN EXCLUSIVE would not: in WAL mode it conflicts only with writers). A killed
 * service's locks are gone, and its left-over WAL is recovered by the switch and deleted, so no stale -wal
 * replays into the new file. The lock is held from the check to the rename, but a process that opens the
 * old file meanwhile would run on the replaced one: the service must stay stopped (docs/deploying.md).
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { refuseNewerStore } from '../errors.js';
import { migrationsOf } from '../migrations.js';
import { createPrivateFile, DEFAULT_BUSY_TIMEOUT_MS, STORE_FOLDER_MODE } from './connection.js';

/** A backup or restore refused (nothing was changed), with the reason for the person running it. */
export class SqliteBackupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SqliteBackupError';
  }
}

export interface CopyOptions {
  /** Replace an existing destination (still never one another process has open). */
  readonly force?: boolean;
}

/** What a backup or restore copied, as checked on the copy. */
export interface CopyReport {
  readonly source: string;
  readonly target: string;
  readonly plants: number;
  /** The newest migration the copy has. */
  readonly schemaVersion: number;
  readonly pages: number;
  readonly bytes: number;
  /** Whether an existing file was replaced (only with force). */
  readonly replaced: boolean;
  readonly durationMs: number;
}

interface StoreFacts {
  readonly plants: number;
  readonly schemaVersion: number;
  readonly pages: number;
}

/** sqlite3_backup_step's page count for "all of them" (better-sqlite3 clamps negative counts to 0). */
const ALL_PAGES = 0x7fffffff;
/** How long to wait for a store's lock: a running service never lets go, but a short CLI run does. */
const LOCK_WAIT_MS = 1000;

/** Copies the store at sourcePath to targetPath, consistently, while a service may be writing to it. */
export async function backupSqlite(
  sourcePath: string,
  targetPath: string,
  options: CopyOptions = {},
): Promise<CopyReport> {
  const started = performance.now();
  const source = resolve(sourcePath);
  const target = resolve(targetPath);
  if (!existsSync(source))
    throw new SqliteBackupError(`no SQLite store at ${source} (a relative path starts from the current folder)`);
  if (!existsSync(dirname(target)))
    throw new SqliteBackupError(`the folder ${dirname(target)} for the backup does not exist`);
  refuseSameFile(source, target, 'the backup cannot be written over the store it copies');
  // A backup is the store as it was, history included: only a restore starts a new one.
  const { facts, replaced } = await copyInto(
    source,
    target,
    options.force === true,
    `the backup of ${source}`,
    () => {},
  );
  return report(source, target, facts, replaced, started);
}

/**
 * Replaces the store at targetPath with the backup at backupPath (or creates it). Refuses
 * a file that is not a sound Plant Store of a schema this build knows, and a store that a
 * running service (any process) has open.
 */
export async function restoreSqlite(
  backupPath: string,
  targetPath: string,
  options: CopyOptions = {},
): Promise<CopyReport> {
  const started = performance.now();
  const backup = resolve(backupPath);
  const target = resolve(targetPath);
  if (!existsSync(backup)) throw new SqliteBackupError(`no backup file at ${backup}`);
  // Checked before anything is copied, so a wrong file is refused at once.
  readFacts(backup, `the backup ${backup}`, { readonly: true, refuseNewer: true });
  mkdirSync(dirname(target), { recursive: true, mode: STORE_FOLDER_MODE });
  refuseSameFile(backup, target, 'the backup is the store itself');
  // Also checked before copying, for a quick answer. The check that counts is the one at the swap.
  if (existsSync(target) && options.force === true) lockUnused(target).close();
  const label = `the restored copy of ${backup}`;
  const { facts, replaced } = await copyInto(backup, target, options.force === true, label, renewChangeLogHistory);
  return report(backup, target, facts, replaced, started);
}

function report(source: string, target: string, facts: StoreFacts, replaced: boolean, started: number): CopyReport {
  return { source, target, ...facts, bytes: statSync(target).size, replaced, durationMs: performance.now() - started };
}

/**
 * A restored store hands out the backup's positions again, so a new history id (migration 0012) tells stream
 * clients holding positions of the replaced history to read afresh.
 */
function renewChangeLogHistory(db: Database.Database): void {
  const found = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'change_log_history'").get();
  if (found !== undefined) db.prepare('UPDATE change_log_history SET history = lower(hex(randomblob(8)))').run();
}

/** Copies source to a temporary file beside target, checks it, lets `adjust` change the copy, and swaps it in. */
async function copyInto(
  source: string,
  target: string,
  force: boolean,
  label: string,
  adjust: (db: Database.Database) => void,
): Promise<{ facts: StoreFacts; replaced: boolean }> {
  if (existsSync(target) && !force) {
    throw new SqliteBackupError(`${target} exists: pass --force to replace it (everything in it is lost)`);
  }
  const temp = join(dirname(target), `${basename(target)}.${process.pid}.partial`);
  try {
    // Made private before SQLite writes into it: it holds what the store does, webhook signing secrets included.
    createPrivateFile(temp);
    const reader = new Database(source, { readonly: true, fileMustExist: true, timeout: DEFAULT_BUSY_TIMEOUT_MS });
    try {
      await reader.backup(temp, { progress: () => ALL_PAGES }).catch((error: unknown) => {
        throw explained(source, error);
      });
    } finally {
      reader.close();
    }
    const facts = readFacts(temp, label, { readonly: false, refuseNewer: false }, adjust);
    syncFile(temp);
    const replaced = swapIn(temp, target, force);
    syncFile(dirname(target));
    return { facts, replaced };
  } finally {
    for (const leftover of [temp, `${temp}-journal`, `${temp}-wal`, `${temp}-shm`]) rmSync(leftover, { force: true });
  }
}

/** Renames temp over target, holding target's lock if it exists (see the top of this file). */
function swapIn(temp: string, target: string, force: boolean): boolean {
  if (existsSync(target) && !force)
    throw new SqliteBackupError(`${target} appeared while it was being written: not replacing it without --force`);
  if (!existsSync(target)) {
    const stale = [`${target}-wal`, `${target}-journal`].filter((path) => existsSync(path));
    if (stale.length > 0) {
      throw new SqliteBackupError(
        `${stale.join(' and ')} exist without their database ${target}: SQLite would replay them into the new file; move them away first`,
      );
    }
    renameSync(temp, target);
    return false;
  }
  const lock = lockUnused(target);
  try {
    // No connection uses it (we hold the lock), and the file is no longer in WAL mode.
    // Closing the lock afterwards deletes only the lock's own empty -journal.
    rmSync(`${target}-shm`, { force: true });
    renameSync(temp, target);
  } finally {
    lock.close();
  }
  return true;
}

/** A connection holding target's EXCLUSIVE lock, with any left-over WAL folded into the file and deleted. */
function lockUnused(target: string): Database.Database {
  const db = new Database(target, { fileMustExist: true, timeout: LOCK_WAIT_MS });
  let mode: unknown;
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    mode = db.pragma('journal_mode = DELETE', { simple: true });
  } catch (error) {
    db.close();
    const code = codeOf(error);
    if (code === 'SQLITE_NOTADB')
      throw new SqliteBackupError(`${target} exists and is not a SQLite database: not replacing it`, { cause: error });
    if (code?.startsWith('SQLITE_BUSY') !== true && code?.startsWith('SQLITE_LOCKED') !== true) throw error;
    mode = undefined;
  }
  // SQLite answers with the mode it stayed in when it could not switch.
  if (mode === 'delete') return db;
  if (db.open) db.close();
  throw new SqliteBackupError(
    `${target} is open in another process (a running plantstore serve?): stop it first; a store in use is never replaced`,
  );
}

/**
 * Checks that the file is a sound Plant Store and says what is in it. Opened
 * read-write, the file is also switched to journal_mode=DELETE, so it stands alone,
 * and `adjust` may change it.
 */
function readFacts(
  path: string,
  label: string,
  how: { readonly: boolean; refuseNewer: boolean },
  adjust?: (db: Database.Database) => void,
): StoreFacts {
  const db = new Database(path, { readonly: how.readonly, fileMustExist: true, timeout: DEFAULT_BUSY_TIMEOUT_MS });
  try {
    return readable(label, () => {
      if (!how.readonly) db.pragma('journal_mode = DELETE');
      const findings = (db.pragma('quick_check(5)') as { quick_check: string }[]).map((row) => row.quick_check);
      if (findings.length !== 1 || findings[0] !== 'ok')
        throw new SqliteBackupError(`${label} is damaged (PRAGMA quick_check: ${findings.join('; ')})`);
      const tables = db
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name IN ('schema_migrations', 'plants')")
        .pluck()
        .all();
      const versions =
        tables.length === 2 ? (db.prepare('SELECT version FROM schema_migrations').pluck().all() as number[]) : [];
      if (versions.length === 0)
        throw new SqliteBackupError(
          `${label} is a SQLite database but not a Plant Store (no schema_migrations and plants tables)`,
        );
      if (how.refuseNewer) refuseNewerStore(`in ${label}`, versions, migrationsOf('sqlite'));
      adjust?.(db);
      return {
        plants: db.prepare('SELECT count(*) FROM plants').pluck().get() as number,
        schemaVersion: Math.max(...versions),
        pages: db.pragma('page_count', { simple: true }) as number,
      };
    });
  } finally {
    db.close();
  }
}

/** Runs fn, turning SQLite's "not a database" and "corrupt" into a sentence about the file. */
function readable<T>(label: string, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    throw explained(label, error);
  }
}

function explained(label: string, error: unknown): unknown {
  const code = codeOf(error);
  if (code === 'SQLITE_NOTADB') return new SqliteBackupError(`${label} is not a SQLite database`, { cause: error });
  if (code?.startsWith('SQLITE_CORRUPT') === true)
    return new SqliteBackupError(`${label} is damaged (${code})`, { cause: error });
  return error;
}

function refuseSameFile(source: string, target: string, why: string): void {
  const real = (path: string) => join(realpathSync(dirname(path)), basename(path));
  const from = real(source);
  const to = real(target);
  if ([from, `${from}-wal`, `${from}-shm`, `${from}-journal`].includes(to))
    throw new SqliteBackupError(`${why} (${to})`);
}

/** fsync a file or a folder: a rename is durable only once its folder is synced. */
function syncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
