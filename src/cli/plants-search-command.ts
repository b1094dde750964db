/**
 * `plantstore plants search WORDS`: what `plants list --search WORDS` does, under the name people
 * type first (before, commander suggested `watch` for it).
 */
import { SEARCHED_FIELDS_OR } from '../domain/plant-words.js';
import { InvalidArgumentError, type Command } from 'commander';
import type { Plant } from '../../packages/client/src/index.js';
import type { ConnectionOptions, PlantsCommandKit } from './plants-command-kit.js';

interface SearchOptions extends ConnectionOptions {
  limit?: number;
  all?: boolean;
}

function parseLimit(value: string): number {
  const limit = Number(value);
  if (!/^[0-9]+$/.test(value) || limit < 1 || limit > 1000)
    throw new InvalidArgumentError('must be an integer from 1 to 1000');
  return limit;
}

export function registerPlantsSearchCommand(plants: Command, kit: PlantsCommandKit): void {
  kit
    .withConnectionOptions(
      plants
        .command('search')
        .description(
          `Find plants by words of their ${SEARCHED_FIELDS_OR} (the same as plants list --search; see its help).`,
        )
        .argument('<words...>', `each must start a word of the ${SEARCHED_FIELDS_OR} (case and accents ignored)`)
        .option('--limit <n>', 'page size, 1 to 1000 (default 100)', parseLimit)
        .option('--all', 'every match, not only the first page'),
    )
    .action(async (words: string[], options: SearchOptions) =>
      kit.run(async () => {
        const client = kit.clientFor(options);
        const query = { q: words.join(' '), ...(options.limit === undefined ? {} : { limit: options.limit }) };
        if (options.all === true) {
          const all: Plant[] = [];
          for await (const plant of client.allPlants(query)) all.push(plant);
          kit.printPlants(all, options);
          return;
        }
        const page = await client.listPlants(query);
        kit.printPlants(page.plants, options);
        if (page.nextCursor !== undefined && options.json !== true)
          process.stderr.write(`more plants match: add --all, or page with plants list --search ... --cursor\n`);
      }),
    );
}
