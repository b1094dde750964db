#!/usr/bin/env node
/**
 * The `plantstore` command. Each subcommand lives in its own module; this file
 * only wires them together and turns known errors into one-line messages.
 */
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config/index.js';
import { TokenError } from '../tokens/token-service.js';
import { registerBackupCommands } from './backup-command.js';
import { endQuietlyWhenOutputCloses, keepServingWhenOutputCloses } from './closed-output.js';
import { commandIndex } from './command-index.js';
import { registerCopyCommands } from './copy-command.js';
import { registerPlantsCommands } from './plants-command.js';
import { registerServeCommands } from './serve-command.js';
import { registerTokenCommands } from './token-command.js';
import { runtimeProblem } from './supported-runtime.js';
import { isUsageError, USAGE_EXIT_CODE, usageLine } from './usage-errors.js';
import { registerWebhookCommands } from './webhook-command.js';
import { SERVICE_VERSION } from '../system/version.js';
import { WebhookInputError } from '../webhooks/subscriptions.js';
import { WebhookUrlError } from '../webhooks/url-policy.js';

const refusal = runtimeProblem(import.meta.url);
if (refusal !== undefined) {
  process.stderr.write(`plantstore: ${refusal}\n`);
  process.exit(2);
}

const program = new Command()
  .name('plantstore')
  .description('Plant Store: an HTTP service that stores plants, and the tools to run it.')
  .version(SERVICE_VERSION, '-V, --version', 'print the version and exit')
  // Mistakes are written by the catch below, as one line (usage-errors.ts); commander prints the rest itself.
  .configureOutput({ outputError: () => {} })
  .exitOverride()
  .hook('preAction', (_program, command) =>
    command.name() === 'serve' ? keepServingWhenOutputCloses() : endQuietlyWhenOutputCloses(),
  );

registerServeCommands(program);
registerTokenCommands(program);
registerWebhookCommands(program);
registerPlantsCommands(program);
registerCopyCommands(program);
registerBackupCommands(program);
program.addHelpText('after', () => commandIndex(program));

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    if (!isUsageError(error)) process.exit(error.exitCode);
    process.stderr.write(usageLine(program, process.argv.slice(2), error));
    process.exit(USAGE_EXIT_CODE);
  }
  if (
    error instanceof ConfigError ||
    error instanceof TokenError ||
    error instanceof WebhookUrlError ||
    error instanceof WebhookInputError
  ) {
    process.stderr.write(`plantstore: ${error.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`plantstore: ${(error as Error).message}\n`);
  process.exit(1);
}
