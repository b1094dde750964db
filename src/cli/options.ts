import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { ConfigError, loadConfig, type Config } from '../config/index.js';
import { openStore } from '../store/open-store.js';
import type { Store } from '../store/types.js';

/** Commander's parsed options: strings for values, booleans for switches. */
export type Options = Record<string, string | boolean | undefined>;

/** Adds --database-url (DATABASE_URL), shared by every command that opens the store. */
export function withDatabaseOption(command: Command): Command {
  return command.option(
    '--database-url <url>',
    'sqlite:<path> or postgres://... (env DATABASE_URL; default sqlite:./data/plantstore.db)',
  );
}

/** What `token` and `webhook` add to their help: they never create a store. */
export const EXISTING_STORE_HELP =
  '\nThe SQLite store must exist: plantstore migrate (or a first plantstore serve) creates it.';

const text = (value: string | boolean | undefined) => (typeof value === 'string' ? value : undefined);

export function configFrom(options: Options): Config {
  return loadConfig(process.env, {
    DATABASE_URL: text(options.databaseUrl),
    PORT: text(options.port),
    HOST: text(options.host),
    LOG_LEVEL: text(options.logLevel),
  });
}

/**
 * A SQLite file that does not exist is refused, not created: a store no service uses (a
 * typo, a relative path from another folder) would silently lose the token or subscription
 * given to it. Only `migrate` and `serve` create stores.
 */
export async function withStore<T>(options: Options, use: (store: Store, config: Config) => Promise<T>): Promise<T> {
  const config = configFrom(options);
  if (config.databaseUrl.startsWith('sqlite:')) {
    const path = resolve(config.databaseUrl.slice('sqlite:'.length));
    if (!existsSync(path)) {
      throw new ConfigError(
        `DATABASE_URL: no SQLite store at ${path}; create it with plantstore migrate (or a first plantstore serve), or fix the path (a relative one starts from the current folder)`,
      );
    }
  }
  const store = await openStore(config.databaseUrl, config);
  try {
    return await use(store, config);
  } finally {
    await store.close();
  }
}
