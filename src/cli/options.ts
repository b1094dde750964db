import type { Command } from 'commander';
import { loadConfig, type Config } from '../config/index.js';

/** Adds --database-url (DATABASE_URL), shared by every command that opens the store. */
export function withDatabaseOption(command: Command): Command {
  return command.option('--database-url <url>', 'sqlite:<path> or postgres://... (env DATABASE_URL; default sqlite:./data/plantstore.db)');
}

export function configFrom(options: Record<string, string | undefined>): Config {
  return loadConfig(process.env, {
    DATABASE_URL: options.databaseUrl,
    PORT: options.port,
    HOST: options.host,
    LOG_LEVEL: options.logLevel,
  });
}
