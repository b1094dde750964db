import { accessSync, constants, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ConfigError } from '../config/index.js';
import { redacted } from '../config/database-url.js';
import type { WriterChannel } from './sqlite/store-writer.js';
import type { Store } from './types.js';

/** Tuning that only one store uses (Config has these fields, so a Config can be passed). */
export interface StoreSettings {
  /** SQLite: reader threads, and how long one read may run. */
  readonly sqliteReaders?: number;
  readonly readTimeLimitMs?: number;
  readonly databasePoolSize?: number;
  readonly databaseStatementTimeoutMs?: number;
  readonly databaseConnectTimeoutMs?: number;
  readonly databasePooler?: 'none' | 'transaction';
  readonly databaseListenUrl?: string | undefined;
  /** Told about connections that broke while idle (PostgreSQL; the pool has replaced them already). */
  readonly onBackgroundError?: (error: Error) => void;
  /** SQLite, in a worker of a multi-worker instance: the primary's writer (src/cluster). */
  readonly writerChannel?: WriterChannel;
}

/**
 * Opens the store a DATABASE_URL names and migrates it. Each store's module and driver is imported only when
 * chosen: `pg` costs memory and start-up time a SQLite process does not need.
 */
export async function openStore(databaseUrl: string, settings: StoreSettings = {}): Promise<Store> {
  if (databaseUrl.startsWith('sqlite:')) {
    if (settings.databasePooler === 'transaction' || settings.databaseListenUrl !== undefined)
      throw new ConfigError('DATABASE_POOLER and DATABASE_LISTEN_URL are for a PostgreSQL DATABASE_URL only');
    const { SqliteStore } = await import('./sqlite/sqlite-store.js');
    const path = databaseUrl.slice('sqlite:'.length);
    try {
      return SqliteStore.open({
        path,
        readers: settings.sqliteReaders,
        readTimeLimitMs: settings.readTimeLimitMs,
        writerChannel: settings.writerChannel,
      });
    } catch (error) {
      throw sqliteOpenError(path, error);
    }
  }
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    const { PostgresStore } = await import('./postgres/postgres-store.js');
    try {
      return await PostgresStore.open({
        url: databaseUrl,
        poolSize: settings.databasePoolSize,
        statementTimeoutMs: settings.databaseStatementTimeoutMs,
        connectTimeoutMs: settings.databaseConnectTimeoutMs,
        pooler: settings.databasePooler,
        listenUrl: settings.databaseListenUrl,
        onBackgroundError: settings.onBackgroundError,
      });
    } catch (error) {
      // The driver's own message is only "Invalid URL".
      if (hasCode(error, 'ERR_INVALID_URL'))
        throw new ConfigError(`DATABASE_URL is not a valid postgres:// URL (got '${redacted(databaseUrl)}')`, {
          cause: error,
        });
      throw error;
    }
  }
  throw new ConfigError(`unsupported DATABASE_URL '${redacted(databaseUrl)}'`);
}

function hasCode(error: unknown, code: string): boolean {
  return error instanceof Error && 'code' in error && error.code === code;
}

/** The driver's words with its code: the StoreUnavailableError it was wrapped in says only the code. */
function reason(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  if (!(cause instanceof Error)) return String(cause);
  const code = 'code' in cause && typeof cause.code === 'string' ? cause.code : undefined;
  return code === undefined || cause.message.includes(code) ? cause.message : `${cause.message} (${code})`;
}

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Why the SQLite file could not be opened, with its path: SQLite's own messages
 * ("unable to open database file", "attempt to write a readonly database") name
 * neither the file nor the folder, and the folder is often what is wrong: SQLite
 * creates the -wal and -shm files beside the database, so a writable file in a
 * read-only folder cannot be opened either.
 */
function sqliteOpenError(path: string, error: unknown): ConfigError {
  const file = resolve(path);
  const folder = dirname(file);
  const why = reason(error);
  const folderStat = statSync(folder, { throwIfNoEntry: false });
  if (folderStat === undefined || !folderStat.isDirectory()) {
    return new ConfigError(
      `DATABASE_URL: cannot create the folder ${folder} that holds the SQLite store ${file}: ${why}`,
      { cause: error },
    );
  }
  if (statSync(file, { throwIfNoEntry: false })?.isDirectory() === true) {
    return new ConfigError(`DATABASE_URL: ${file} is a folder, not a SQLite file (${why})`, { cause: error });
  }
  if (!writable(folder)) {
    return new ConfigError(
      `DATABASE_URL: cannot write the folder ${folder} that holds the SQLite store ${file} (SQLite creates its -wal and -shm files there): ${why}`,
      { cause: error },
    );
  }
  if (statSync(file, { throwIfNoEntry: false }) !== undefined && !writable(file)) {
    return new ConfigError(`DATABASE_URL: cannot write the SQLite store ${file}: ${why}`, { cause: error });
  }
  return new ConfigError(`DATABASE_URL: cannot open the SQLite store ${file}: ${why}`, { cause: error });
}
