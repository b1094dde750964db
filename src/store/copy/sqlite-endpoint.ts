/**
 * The SQLite ends of a copy: a connection of its own (connection.ts settings) on a file migrated by the
 * service's migrate(); not SqliteStore.open, whose writer thread and integrity check a copy does not need.
 * The source's read transaction is a WAL snapshot a writing service neither blocks nor changes (the WAL grows
 * meanwhile). The target's IMMEDIATE transaction holds the write lock until the commit.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type Database from 'better-sqlite3';
import { DEFAULT_BUSY_TIMEOUT_MS, openConnection } from '../sqlite/connection.js';
import { guarded } from '../sqlite/errors.js';
import { migrate } from '../sqlite/sqlite-store.js';
import type { CopySource, CopyTarget } from './endpoint.js';
import { CopyError } from './errors.js';
import type { CopyRows, CopyTable } from './rows.js';
import { SqliteCopyReader } from './sqlite-reader.js';
import { SqliteCopyWriter } from './sqlite-writer.js';

/** SQLite's own words when it cannot open a file name neither the file nor the option. */
function openMigrated(path: string, option: '--from' | '--to'): Database.Database {
  let db: Database.Database;
  try {
    db = openConnection(path, DEFAULT_BUSY_TIMEOUT_MS);
  } catch (error) {
    throw new CopyError(
      `${option}: cannot open the SQLite store ${path}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  try {
    migrate(db);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/** A store that must exist: a copy from a mistyped path would otherwise create, and copy, an empty one. */
export function openSqliteSource(path: string): CopySource {
  const file = resolve(path);
  if (!existsSync(file))
    throw new CopyError(`--from: no SQLite store at ${file} (a relative path starts from the current folder)`);
  // The snapshot starts at the first read, not at BEGIN: take it now.
  const db = begun(openMigrated(file, '--from'), 'BEGIN; SELECT count(*) FROM schema_migrations');
  return new SqliteSource(db, `sqlite:${file}`);
}

/** Created when missing, as the service creates its store. */
export function openSqliteTarget(path: string): CopyTarget {
  const file = resolve(path);
  const db = begun(openMigrated(file, '--to'), 'BEGIN IMMEDIATE');
  return new SqliteTarget(db, `sqlite:${file}`);
}

function begun(db: Database.Database, sql: string): Database.Database {
  try {
    guarded(() => db.exec(sql));
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

class SqliteSource extends SqliteCopyReader implements CopySource {
  async close(): Promise<void> {
    if (!this.db.open) return;
    if (this.db.inTransaction) this.db.exec('COMMIT');
    this.db.close();
  }
}

class SqliteTarget extends SqliteCopyReader implements CopyTarget {
  private readonly writer = new SqliteCopyWriter(this.db);

  async insert<T extends CopyTable>(table: T, rows: readonly CopyRows[T][]): Promise<void> {
    guarded(() => this.writer.insert(table, rows));
  }

  async clear(): Promise<void> {
    guarded(() => this.writer.clear());
  }

  async raiseVersionCounter(last: bigint): Promise<void> {
    guarded(() => this.writer.raiseVersionCounter(last));
  }

  async finish(): Promise<void> {
    guarded(() => this.writer.finish());
  }

  async commit(): Promise<void> {
    guarded(() => this.db.exec('COMMIT'));
  }

  async close(): Promise<void> {
    if (!this.db.open) return;
    if (this.db.inTransaction) this.db.exec('ROLLBACK');
    this.db.close();
  }
}
