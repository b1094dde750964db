/**
 * `plantstore plants add|get|list|update|rm`, through the typed client so ids stay exact and
 * errors carry the server's message. Without a terminal, output is tab-separated lines with
 * no header, for cut/awk.
 */
import { CONTENT_FIELDS_AND, CONTENT_FIELDS_OR, SEARCHED_FIELDS_OR } from '../domain/plant-words.js';
import { Command, InvalidArgumentError } from 'commander';
import {
  createPlantStoreClient,
  PlantStoreError,
  toPlantId,
  type Plant,
  type PlantCount,
  type PlantOrder,
  type PlantStoreClient,
} from '../../packages/client/src/index.js';
import { stringifyJson } from '../../packages/client/src/json.js';
import { ConfigError } from '../config/index.js';
import { registerPlantsBulkCommands } from './plants-bulk-command.js';
import { registerPlantsSearchCommand } from './plants-search-command.js';
import { registerPlantsSeedCommand } from './plants-seed-command.js';
import { registerPlantsWatchCommand } from './plants-watch-command.js';
import type { ConnectionOptions, PlantsCommandKit } from './plants-command-kit.js';
import {
  changedFields,
  changeFlags,
  createdFields,
  PLANT_COLUMN_HEADERS,
  plantCells,
  withChangeFieldOptions,
  withCreateFieldOptions,
  lengthsOf,
  type FieldOptions,
} from './plant-field-options.js';
import { printTable } from './table.js';

export const DEFAULT_URL = 'http://127.0.0.1:8080';

/** --url and --token, and --json described as `json` says (false: a command whose output is not a table has none). */
function withConnectionOptions(
  command: Command,
  json: string | false = 'print JSON instead of a table (ids as exact JSON numbers)',
): Command {
  const connected = command
    .option('--url <url>', `the service's base URL (env PLANTSTORE_URL; default ${DEFAULT_URL})`)
    .option('--token <token>', 'bearer token (env PLANTSTORE_TOKEN, which is safer: flags show up in ps)');
  return json === false ? connected : connected.option('--json', json);
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
  if (!/^[0-9]+$/.test(value) || limit < 1 || limit > 1000)
    throw new InvalidArgumentError('must be an integer from 1 to 1000');
  return limit;
}

function clientFor(options: ConnectionOptions): PlantStoreClient {
  const token = options.token ?? process.env.PLANTSTORE_TOKEN;
  if (token === undefined || token === '') {
    throw new ConfigError(
      'no API token: set PLANTSTORE_TOKEN or pass --token (create one with: plantstore token create --name NAME)',
    );
  }
  const baseUrl = options.url ?? (process.env.PLANTSTORE_URL || DEFAULT_URL);
  if (!/^https?:\/\/[^/]/.test(baseUrl))
    throw new ConfigError(`--url must be an http:// or https:// URL (got '${baseUrl}')`);
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

interface ListOptions {
  search?: string;
  sort?: PlantOrder;
  tag: string[];
  limit?: number;
  cursor?: string;
  after?: bigint;
  count?: boolean;
  all?: boolean;
}

const ORDERS: readonly PlantOrder[] = ['id', '-id', 'name', '-name'];

function parseOrder(value: string): PlantOrder {
  const order = ORDERS.find((known) => known === value);
  if (order === undefined) throw new InvalidArgumentError(`must be one of ${ORDERS.join(', ')}`);
  return order;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** A page, and its count when one was asked: with the JSON, or where it does not mix with the plants' lines. */
function printList(plants: readonly Plant[], total: PlantCount | undefined, options: ConnectionOptions): void {
  if (total === undefined) {
    print(plants, options, true);
    return;
  }
  const count = `${total.exact ? '' : '~'}${total.count}`;
  if (options.json === true)
    process.stdout.write(`${stringifyJson({ total: total.count, exact: total.exact, plants })}\n`);
  else if (process.stdout.isTTY === true) {
    print(plants, options, true);
    process.stdout.write(`${count} ${total.count === 1 ? 'plant matches' : 'plants match'}\n`);
  } else {
    print(plants, options, true);
    process.stderr.write(`total\t${count}\n`);
  }
}

function print(plants: readonly Plant[], options: ConnectionOptions, asList: boolean): void {
  if (options.json === true) {
    process.stdout.write(`${stringifyJson(asList ? plants : plants[0])}\n`);
  } else if (process.stdout.isTTY === true) {
    printTable(PLANT_COLUMN_HEADERS, plants.map(plantCells));
  } else {
    // Text fields cannot hold control characters, so tabs separate fields unambiguously.
    for (const p of plants) process.stdout.write(`${plantCells(p).join('\t')}\n`);
  }
}

export function registerPlantsCommands(program: Command): void {
  const plants = program
    .command('plants')
    .description(
      'Create, read, list, change, delete, import and export plants on a running service (uses PLANTSTORE_TOKEN).',
    )
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  export PLANTSTORE_TOKEN=pst_...',
        "  plantstore plants add 9223372036854775807 'Monstera deliciosa' --tag houseplant",
        '  plantstore plants get 9223372036854775807',
        '  plantstore plants list --tag houseplant --all --json',
        '  plantstore plants list --search mon --sort name --count',
        '  plantstore plants search monstera                 # the same as list --search',
        '  plantstore plants seed                            # a sample catalogue of a few hundred plants',
        "  plantstore plants update 9223372036854775807 --name 'Monstera' --no-tag --if-match '\"3\"'",
        '  plantstore plants rm 9223372036854775807',
        '  plantstore plants import plants.ndjson            # or .csv; --mode skip keeps the valid lines',
        '  plantstore plants export --output plants.csv',
        '',
        "Failures print the server's message on one line and exit with 1 (2 for a missing token or a bad --url).",
      ].join('\n'),
    );

  withConnectionOptions(
    withCreateFieldOptions(
      plants
        .command('add')
        .description(`Create a plant (a retry with the same ${CONTENT_FIELDS_AND} is harmless).`)
        .argument('<id>', 'the int64 id you choose', parseId)
        .argument('<name>', `the name, ${lengthsOf('name')}`),
    ),
  ).action(async (id: bigint, name: string, options: ConnectionOptions & FieldOptions) =>
    run(async () => {
      const created = await clientFor(options).createPlant({ id, name, ...createdFields(options) });
      print([{ id, ...created }], options, false);
    }),
  );

  withConnectionOptions(
    plants.command('get').description('Show one plant.').argument('<id>', 'the plant id', parseId),
  ).action(async (id: bigint, options: ConnectionOptions) =>
    run(async () => {
      print([await clientFor(options).getPlant(id)], options, false);
    }),
  );

  withConnectionOptions(
    plants
      .command('list')
      .description('List and find plants, one page (or --all of them); see docs/finding-plants.md.')
      .option(
        '--search <words>',
        `only plants whose ${SEARCHED_FIELDS_OR} has a word starting with each of these (case and accents ignored)`,
      )
      .option('--sort <order>', 'id (default), -id, name or -name', parseOrder)
      .option('--tag <tag>', 'only plants with exactly this tag; repeat it for any of several', collect, [])
      .option('--limit <n>', 'page size, 1 to 1000 (default 100)', parseLimit)
      .option('--cursor <cursor>', 'start where the previous page ended (the cursor it printed)')
      .option('--after <id>', 'with the id order: start after this id', parseId)
      .option(
        '--count',
        'also count every matching plant: printed after the page on a terminal, as "total<TAB>N" on stderr otherwise, as {"total":N,"exact":true,"plants":[...]} with --json',
      )
      .option('--all', 'follow the pages until the last one'),
  ).action(async (options: ConnectionOptions & ListOptions) =>
    run(async () => {
      const client = clientFor(options);
      const query = {
        ...(options.limit === undefined ? {} : { limit: options.limit }),
        ...(options.search === undefined ? {} : { q: options.search }),
        ...(options.sort === undefined ? {} : { sort: options.sort }),
        ...(options.tag.length === 0 ? {} : { tag: options.tag }),
      };
      if (options.all === true) {
        const all: Plant[] = [];
        for await (const plant of client.allPlants(query)) all.push(plant);
        printList(all, options.count === true ? { count: all.length, exact: true } : undefined, options);
        return;
      }
      const page = await client.listPlants({
        ...query,
        ...(options.cursor === undefined ? {} : { cursor: options.cursor }),
        ...(options.after === undefined ? {} : { after: options.after }),
        ...(options.count === true ? { count: 'exact' } : {}),
      });
      printList(page.plants, page.total, options);
      if (page.nextCursor !== undefined && options.json !== true) {
        process.stderr.write(`more plants follow: add --cursor ${page.nextCursor}, or --all\n`);
      }
    }),
  );

  const update = withChangeFieldOptions(
    plants
      .command('update')
      .description(
        `Change a plant's ${CONTENT_FIELDS_OR} (what is not given is kept); prints the plant and, on stderr, its new ETag.`,
      )
      .argument('<id>', 'the plant id', parseId)
      .option('--name <name>', `a new name, ${lengthsOf('name')}`),
  );
  withConnectionOptions(
    update.command.option(
      '--if-match <etag>',
      'change it only if it is still at this version (an ETag, e.g. \'"3"\'); else fail, changing nothing',
    ),
  ).action(async (id: bigint, options: ConnectionOptions & FieldOptions & { name?: string; ifMatch?: string }) =>
    run(async () => {
      const change = { ...(options.name === undefined ? {} : { name: options.name }), ...changedFields(options) };
      // An empty merge patch is a valid no-op for the API; from a terminal it is a forgotten option.
      if (Object.keys(change).length === 0) throw new ConfigError(`nothing to change: give ${changeFlags()}`);
      update.refuseBothForms();
      const result = await clientFor(options).updatePlant(
        id,
        change,
        options.ifMatch === undefined ? {} : { ifMatch: options.ifMatch },
      );
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
      .option(
        '--if-match <etag>',
        'delete it only if it is still at this version (an ETag); else fail, deleting nothing',
      ),
  ).action(async (id: bigint, options: ConnectionOptions & { ifMatch?: string }) =>
    run(async () => {
      const result = await clientFor(options).deletePlant(
        id,
        options.ifMatch === undefined ? {} : { ifMatch: options.ifMatch },
      );
      if (result.kind === 'precondition-failed') throw result.error;
      process.stdout.write(
        options.json === true ? `${stringifyJson({ id, deleted: true })}\n` : `deleted plant ${id}\n`,
      );
    }),
  );

  const printPlants = (list: readonly Plant[], options: ConnectionOptions) => print(list, options, true);
  const kit: PlantsCommandKit = { withConnectionOptions, clientFor, run, collect, printPlants };
  registerPlantsSearchCommand(plants, kit);
  registerPlantsBulkCommands(plants, kit);
  registerPlantsSeedCommand(plants, kit);
  registerPlantsWatchCommand(plants, kit);
}
