/**
 * `plantstore plants add|get|list|rm`: the API from a terminal, through the typed
 * client (so ids stay exact and errors carry the server's message).
 *
 * Output: an aligned table when stdout is a terminal; tab-separated lines without
 * a header when it is not (for cut/awk); --json for JSON (ids as exact numbers).
 */
import { Command, InvalidArgumentError } from 'commander';
import { createPlantStoreClient, PlantStoreError, toPlantId, type Plant, type PlantStoreClient } from '../client/index.js';
import { stringifyJson } from '../client/json.js';
import { ConfigError } from '../config/index.js';
import { printTable } from './table.js';

export const DEFAULT_URL = 'http://127.0.0.1:8080';

interface ConnectionOptions {
  url?: string;
  token?: string;
  json?: boolean;
}

function withConnectionOptions(command: Command): Command {
  return command
    .option('--url <url>', `the service's base URL (env PLANTSTORE_URL; default ${DEFAULT_URL})`)
    .option('--token <token>', 'bearer token (env PLANTSTORE_TOKEN, which is safer: flags show up in ps)')
    .option('--json', 'print JSON instead of a table (ids as exact JSON numbers)');
}

function parseId(value: string): bigint {
  try {
    return toPlantId(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

function parseLimit(value: string): number {
  const limit = Number(value);
  if (!/^[0-9]+$/.test(value) || limit < 1 || limit > 1000) throw new InvalidArgumentError('must be an integer from 1 to 1000');
  return limit;
}

function clientFor(options: ConnectionOptions): PlantStoreClient {
  const token = options.token ?? process.env.PLANTSTORE_TOKEN;
  if (token === undefined || token === '') {
    throw new ConfigError('no API token: set PLANTSTORE_TOKEN or pass --token (create one with: plantstore token create --name NAME)');
  }
  const baseUrl = options.url ?? (process.env.PLANTSTORE_URL || DEFAULT_URL);
  if (!/^https?:\/\/[^/]/.test(baseUrl)) throw new ConfigError(`--url must be an http:// or https:// URL (got '${baseUrl}')`);
  return createPlantStoreClient({ baseUrl, token });
}

/** One line for the terminal: the server's message, then status and catalogue code. */
function explained(error: unknown): unknown {
  if (!(error instanceof PlantStoreError)) return error;
  const code = error.error === 0 ? '' : `, error ${error.error}`;
  return new Error(`${error.message} (HTTP ${error.status}${code})`);
}

async function run(action: () => Promise<void>): Promise<void> {
  try {
    await action();
  } catch (error) {
    throw explained(error);
  }
}

function print(plants: readonly Plant[], options: ConnectionOptions, asList: boolean): void {
  if (options.json === true) {
    process.stdout.write(`${stringifyJson(asList ? plants : plants[0])}\n`);
  } else if (process.stdout.isTTY === true) {
    printTable(['ID', 'NAME', 'TAG'], plants.map((p) => [String(p.id), p.name, p.tag ?? '']));
  } else {
    // Names and tags cannot hold control characters, so tabs separate fields unambiguously.
    for (const p of plants) process.stdout.write(`${p.id}\t${p.name}\t${p.tag ?? ''}\n`);
  }
}

export function registerPlantsCommands(program: Command): void {
  const plants = program
    .command('plants')
    .description('Create, read, list, change and delete plants on a running service (uses PLANTSTORE_TOKEN).')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  export PLANTSTORE_TOKEN=pst_...',
        "  plantstore plants add 9223372036854775807 'Monstera deliciosa' --tag houseplant",
        '  plantstore plants get 9223372036854775807',
        '  plantstore plants list --tag houseplant --all --json',
        "  plantstore plants update 9223372036854775807 --name 'Monstera' --no-tag --if-match '\"3\"'",
        '  plantstore plants rm 9223372036854775807',
        '',
        'Failures print the server\'s message on one line and exit with 1 (2 for a missing token or a bad --url).',
      ].join('\n'),
    );

  withConnectionOptions(
    plants
      .command('add')
      .description('Create a plant (a retry with the same name and tag is harmless).')
      .argument('<id>', 'the int64 id you choose', parseId)
      .argument('<name>', 'the name, 1 to 200 characters')
      .option('--tag <tag>', 'a tag, 1 to 100 characters'),
  ).action(async (id: bigint, name: string, options: ConnectionOptions & { tag?: string }) =>
    run(async () => {
      const created = await clientFor(options).createPlant({ id, name, ...(options.tag === undefined ? {} : { tag: options.tag }) });
      print([{ id, ...created }], options, false);
    }),
  );

  withConnectionOptions(plants.command('get').description('Show one plant.').argument('<id>', 'the plant id', parseId)).action(
    async (id: bigint, options: ConnectionOptions) =>
      run(async () => {
        print([await clientFor(options).getPlant(id)], options, false);
      }),
  );

  withConnectionOptions(
    plants
      .command('list')
      .description('List plants in id order, one page (or --all of them).')
      .option('--limit <n>', 'page size, 1 to 1000 (default 100)', parseLimit)
      .option('--after <id>', 'start after this id (the cursor of the next page)', parseId)
      .option('--tag <tag>', 'only plants with exactly this tag')
      .option('--all', 'follow the pages until the last one'),
  ).action(async (options: ConnectionOptions & { limit?: number; after?: bigint; tag?: string; all?: boolean }) =>
    run(async () => {
      const client = clientFor(options);
      const query = {
        ...(options.limit === undefined ? {} : { limit: options.limit }),
        ...(options.tag === undefined ? {} : { tag: options.tag }),
      };
      if (options.all === true) {
        const all: Plant[] = [];
        for await (const plant of client.allPlants(query)) all.push(plant);
        print(all, options, true);
        return;
      }
      const page = await client.listPlants({ ...query, ...(options.after === undefined ? {} : { after: options.after }) });
      print(page.plants, options, true);
      if (page.nextAfter !== undefined && options.json !== true) {
        process.stderr.write(`more plants follow: add --after ${page.nextAfter}, or --all\n`);
      }
    }),
  );

  withConnectionOptions(
    plants
      .command('update')
      .description('Change a plant\'s name or tag (what is not given is kept); prints the plant and, on stderr, its new ETag.')
      .argument('<id>', 'the plant id', parseId)
      .option('--name <name>', 'a new name, 1 to 200 characters')
      .option('--tag <tag>', 'a new tag, 1 to 100 characters')
      .option('--no-tag', 'remove the tag')
      .option('--if-match <etag>', 'change it only if it is still at this version (an ETag, e.g. \'"3"\'); else fail, changing nothing'),
  ).action(async (id: bigint, options: ConnectionOptions & { name?: string; tag?: string | false; ifMatch?: string }) =>
    run(async () => {
      const change = {
        ...(options.name === undefined ? {} : { name: options.name }),
        ...(options.tag === undefined ? {} : { tag: options.tag === false ? null : options.tag }),
      };
      const result = await clientFor(options).updatePlant(id, change, options.ifMatch === undefined ? {} : { ifMatch: options.ifMatch });
      if (result.kind === 'precondition-failed') throw result.error;
      if (options.json === true) process.stdout.write(`${stringifyJson({ ...result.plant, etag: result.etag })}\n`);
      else {
        print([result.plant], options, false);
        process.stderr.write(`etag ${result.etag}\n`);
      }
    }),
  );

  withConnectionOptions(
    plants
      .command('rm')
      .description('Delete a plant.')
      .argument('<id>', 'the plant id', parseId)
      .option('--if-match <etag>', 'delete it only if it is still at this version (an ETag); else fail, deleting nothing'),
  ).action(async (id: bigint, options: ConnectionOptions & { ifMatch?: string }) =>
    run(async () => {
      const result = await clientFor(options).deletePlant(id, options.ifMatch === undefined ? {} : { ifMatch: options.ifMatch });
      if (result.kind === 'precondition-failed') throw result.error;
      process.stdout.write(options.json === true ? `${stringifyJson({ id, deleted: true })}\n` : `deleted plant ${id}\n`);
    }),
  );
}
