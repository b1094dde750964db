import type { Command } from 'commander';
import { runInstance } from '../cluster/instance.js';
import { runServer } from '../server.js';
import { openStore } from '../store/open-store.js';
import { explainListenError } from './listen-errors.js';
import { configFrom, withDatabaseOption, type Options } from './options.js';

export function registerServeCommands(program: Command): void {
  withDatabaseOption(
    program
      .command('serve')
      .description('Run the HTTP service (what `npm start` runs).')
      .option('--port <port>', 'port to listen on (env PORT; default 8080)')
      .option('--host <host>', 'address to listen on (env HOST; default 127.0.0.1)')
      .option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent (env LOG_LEVEL; default info)'),
  ).action(async (options: Options) => {
    const config = configFrom(options);
    try {
      await (config.workers > 1 ? runInstance(config) : runServer(config));
    } catch (error) {
      throw explainListenError(error, config);
    }
  });

  withDatabaseOption(
    program
      .command('migrate')
      .description(
        'Create the store if it does not exist, apply pending database migrations, then exit (serve does both at start-up too).',
      ),
  ).action(async (options: Options) => {
    const config = configFrom(options);
    const store = await openStore(config.databaseUrl, config);
    await store.migrate();
    await store.close();
    process.stdout.write(`migrations applied (${store.kind})\n`);
  });
}
