/**
 * `plantstore plants seed`: a sample catalogue of a few hundred real plants (sample-plants.ts) for
 * trying the service, loaded through the import so it is all or nothing and a second seed is harmless.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { toPlantId } from '../../packages/client/src/index.js';
import { stringifyJson } from '../../packages/client/src/json.js';
import type { ConnectionOptions, PlantsCommandKit } from './plants-command-kit.js';
import { samplePlants } from './sample-plants.js';

function parseFirstId(value: string): bigint {
  try {
    return toPlantId(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

export function registerPlantsSeedCommand(plants: Command, kit: PlantsCommandKit): void {
  kit
    .withConnectionOptions(
      plants
        .command('seed')
        .description('Load a sample catalogue of a few hundred real plants with tags, for trying things out.')
        .option(
          '--first-id <id>',
          'the first id to use; the sample takes consecutive ids from it (default 1)',
          parseFirstId,
        ),
      'print the import summary as JSON',
    )
    .action(async (options: ConnectionOptions & { firstId?: bigint }) =>
      kit.run(async () => {
        const plants = samplePlants(options.firstId ?? 1n);
        const last = plants[plants.length - 1]?.id;
        if (last === undefined || last > 9223372036854775807n)
          throw new InvalidArgumentError(`--first-id leaves no room for ${plants.length} ids below 2^63`);
        const body = plants.map((plant) => `${stringifyJson(plant)}\n`).join('');
        const summary = await kit.clientFor(options).importPlants(body, { format: 'ndjson', mode: 'skip' });
        if (options.json === true) process.stdout.write(`${stringifyJson(summary)}\n`);
        else {
          process.stdout.write(
            `sample catalogue: created ${summary.created}, unchanged ${summary.unchanged}, skipped ${summary.skipped} ` +
              `(ids ${plants[0]?.id} to ${last})\n`,
          );
          for (const problem of summary.problems) process.stdout.write(`line ${problem.line}: ${problem.message}\n`);
        }
      }),
    );
}
