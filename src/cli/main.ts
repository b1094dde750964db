#!/usr/bin/env node
/**
 * The `plantstore` command. Each subcommand lives in its own module; this file
 * only wires them together and turns known errors into one-line messages.
 */
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config/index.js';
import { TokenError } from '../tokens/token-service.js';
import { registerBackupCommands } from './backup-command.js';
import { commandIndex } from './command-index.js';
import { registerCopyCommands } from './copy-command.js';
import { registerPlantsCommands } from './plants-command.js';
import { registerServeCommands } from './serve-command.js';
import { registerTokenCommands } from './token-command.js';
import { unsupportedRuntime } from './supported-runtime.js';
import { registerWebhookCommands } from './webhook-command.js';
import { WebhookInputError } from '../webhooks/subscriptions.js';
import { WebhookUrlError } from '../webhooks/url-policy.js';

const runtimeProblem = unsupportedRuntime();
if (runtimeProblem !== undefined) {
  process.stderr.write(`plantstore: ${runtimeProblem}\n`);
  process.exit(2);
}

const program = new Command()
  .name('plantstore')
  .description('Plant Store: an HTTP service that stores plants, and the tools to run it.')
  .showHelpAfterError()
  .exitOverride();

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
  if (error instanceof CommanderError) process.exit(error.exitCode);
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
