import { ConfigError } from '../config.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './types.js';

/** Opens the store a DATABASE_URL names and brings its schema up to date. */
export async function openStore(databaseUrl: string): Promise<Store> {
  if (databaseUrl.startsWith('sqlite:')) {
    return SqliteStore.open({ path: databaseUrl.slice('sqlite:'.length) });
  }
  throw new ConfigError(`unsupported DATABASE_URL '${databaseUrl}'`);
}
