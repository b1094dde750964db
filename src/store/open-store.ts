import { ConfigError } from '../config/index.js';
import type { Store } from './types.js';

/** Tuning that only the PostgreSQL store uses (Config has these fields, so a Config can be passed). */
export interface StoreSettings {
  readonly databasePoolSize?: number;
  readonly databaseStatementTimeoutMs?: number;
  readonly databaseConnectTimeoutMs?: number;
}

/**
 * Opens the store a DATABASE_URL names and brings its schema up to date.
 *
 * Each store's module (and its driver) is imported only when chosen: `pg` alone
 * adds about 15 MB of resident memory and 50 ms of start-up to a SQLite process.
 */
export async function openStore(databaseUrl: string, settings: StoreSettings = {}): Promise<Store> {
  if (databaseUrl.startsWith('sqlite:')) {
    const { SqliteStore } = await import('./sqlite/sqlite-store.js');
    return SqliteStore.open({ path: databaseUrl.slice('sqlite:'.length) });
  }
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    const { PostgresStore } = await import('./postgres/postgres-store.js');
    return PostgresStore.open({
      url: databaseUrl,
      poolSize: settings.databasePoolSize,
      statementTimeoutMs: settings.databaseStatementTimeoutMs,
      connectTimeoutMs: settings.databaseConnectTimeoutMs,
    });
  }
  throw new ConfigError(`unsupported DATABASE_URL '${databaseUrl}'`);
}
