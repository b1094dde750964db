import { ConfigError } from '../config.js';
import { PostgresStore } from './postgres/postgres-store.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './types.js';

/** Tuning that only the PostgreSQL store uses (Config has these fields, so a Config can be passed). */
export interface StoreSettings {
  readonly databasePoolSize?: number;
  readonly databaseStatementTimeoutMs?: number;
  readonly databaseConnectTimeoutMs?: number;
}

/** Opens the store a DATABASE_URL names and brings its schema up to date. */
export async function openStore(databaseUrl: string, settings: StoreSettings = {}): Promise<Store> {
  if (databaseUrl.startsWith('sqlite:')) {
    return SqliteStore.open({ path: databaseUrl.slice('sqlite:'.length) });
  }
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    return PostgresStore.open({
      url: databaseUrl,
      poolSize: settings.databasePoolSize,
      statementTimeoutMs: settings.databaseStatementTimeoutMs,
      connectTimeoutMs: settings.databaseConnectTimeoutMs,
    });
  }
  throw new ConfigError(`unsupported DATABASE_URL '${databaseUrl}'`);
}
