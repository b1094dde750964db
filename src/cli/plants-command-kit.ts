/**
 * What the bulk and watch commands share with plants-command.ts. Handed over rather than imported by
 * them, as plants-command.ts registers them: importing back would be a cycle.
 */
import type { Command } from 'commander';
import type { Plant, PlantStoreClient } from '../../packages/client/src/index.js';

export interface ConnectionOptions {
  url?: string;
  token?: string;
  json?: boolean;
}

export interface PlantsCommandKit {
  /** --url and --token, and --json described as `json` says (false: a command whose output is not a table has none). */
  readonly withConnectionOptions: (command: Command, json?: string | false) => Command;
  readonly clientFor: (options: ConnectionOptions) => PlantStoreClient;
  /** Runs a command's action; a failure from the service becomes one line for the terminal. */
  readonly run: (action: () => Promise<void>) => Promise<void>;
  /** Commander's collector for a repeatable option. */
  readonly collect: (value: string, previous: string[]) => string[];
  /** Prints plants as `plants list` does: a table on a terminal, tab-separated lines otherwise, or JSON. */
  readonly printPlants: (plants: readonly Plant[], options: ConnectionOptions) => void;
}
