/**
 * A command-line mistake is one line on stderr naming it, with where to read more, and exit
 * status 2 (as for a bad configuration): the whole help after a typo hid the message under it.
 */
import type { Command, CommanderError } from 'commander';

/** Commander's codes for help and the version: printed on purpose, not mistakes. */
const NOT_MISTAKES = new Set([
  'commander.helpDisplayed',
  'commander.help',
  'commander.version',
  'commander.executeSubCommandAsync',
]);

export const USAGE_EXIT_CODE = 2;

export function isUsageError(error: CommanderError): boolean {
  return !NOT_MISTAKES.has(error.code);
}

/** The command the words on the command line name, as deep as they go (`plantstore plants add`). */
export function namedCommand(program: Command, words: readonly string[]): Command {
  let command = program;
  for (const word of words) {
    if (word.startsWith('-')) break;
    const child = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (child === undefined) break;
    command = child;
  }
  return command;
}

function pathOf(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at !== null; at = at.parent) names.unshift(at.name());
  return names.join(' ');
}

/** `plantstore plants: unknown command 'serch' (Did you mean search?); see plantstore plants --help`. */
export function usageLine(program: Command, words: readonly string[], error: CommanderError): string {
  const command = namedCommand(program, words);
  const message = error.message
    .replace(/^error: /, '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .join(' ');
  return `${pathOf(command)}: ${message}; see ${pathOf(command)} --help\n`;
}
