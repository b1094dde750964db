/**
 * The end of `plantstore --help`: every command, nested ones included, so one
 * help screen shows everything the tool can do.
 */
import type { Command } from 'commander';

function leaves(command: Command, prefix: string): [string, string][] {
  const visible = command.commands.filter((c) => c.name() !== 'help');
  const usage = `${prefix} ${command.name()}`.trim();
  if (visible.length === 0) return [[`${usage} ${command.usage()}`.trim(), command.description()]];
  return visible.flatMap((child) => leaves(child, usage));
}

export function commandIndex(program: Command): string {
  const rows = program.commands.filter((c) => c.name() !== 'help').flatMap((c) => leaves(c, program.name()));
  const width = Math.max(...rows.map(([usage]) => usage.length));
  return [
    '',
    'All commands:',
    ...rows.map(([usage, description]) => `  ${usage.padEnd(width)}  ${description.split('\n')[0]}`),
    '',
    `Each has its own help, e.g. ${program.name()} plants add --help`,
  ].join('\n');
}
