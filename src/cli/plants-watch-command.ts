/**
 * `plantstore plants watch`: one line per change until Ctrl-C. Without a terminal, every line
 * has the event id, its type and every field of the plant (a deletion's all empty but its id)
 * for cut/awk; its event id is what --from takes to carry on after it.
 */
import { PLANT_CONTENT_KEYS, PLANT_KEYS } from '../domain/plant.js';
import { once } from 'node:events';
import { InvalidArgumentError, type Command } from 'commander';
import type { EventType, PlantChangeEvent } from '../../packages/client/src/index.js';
import { stringifyJson } from '../../packages/client/src/json.js';
import type { ConnectionOptions, PlantsCommandKit } from './plants-command-kit.js';

const TYPES: readonly EventType[] = ['plant.created', 'plant.updated', 'plant.deleted'];

function parseTypes(value: string): EventType[] {
  return value.split(',').map((name) => {
    const type = TYPES.find((known) => known === name.trim());
    if (type === undefined) throw new InvalidArgumentError(`'${name}' is not one of ${TYPES.join(', ')}`);
    return type;
  });
}

function parseEventId(value: string): string {
  const match = /^(?:[0-9a-f]{16}-)?(0|[1-9][0-9]{0,18})$/.exec(value);
  if (match === null || BigInt(match[1] ?? '') > 2n ** 63n - 1n) {
    throw new InvalidArgumentError(
      'must be an event id: the first column of a line printed before (<history>-<position>), or 0 for the oldest change kept',
    );
  }
  return value;
}

function lineOf(change: PlantChangeEvent, json: boolean): string {
  if (json) {
    const previous =
      change.type === 'plant.updated' && change.previousTag !== undefined ? { previousTag: change.previousTag } : {};
    const object = {
      id: change.id,
      position: change.position.toString(),
      type: change.type,
      plant: change.plant,
      ...previous,
    };
    return `${stringifyJson(object)}\n`;
  }
  const plant = change.type === 'plant.deleted' ? undefined : change.plant;
  const named = PLANT_CONTENT_KEYS.map((key) => plant?.[key] ?? '');
  const fields = [change.id, change.type, change.plant.id.toString(), ...named];
  // A plant's text fields hold no control characters, so tabs separate fields unambiguously.
  return process.stdout.isTTY === true ? `${fields.join('  ').trimEnd()}\n` : `${fields.join('\t')}\n`;
}

interface WatchOptions extends ConnectionOptions {
  types?: EventType[];
  tag?: string;
  from?: string;
}

export function registerPlantsWatchCommand(
  plants: Command,
  { withConnectionOptions, clientFor, run }: PlantsCommandKit,
): void {
  withConnectionOptions(
    plants
      .command('watch')
      .description(
        'Print every change of a plant as it happens, until Ctrl-C; reconnects and carries on where it was by itself.',
      )
      .option('--types <types>', 'only these, comma-separated: plant.created, plant.updated, plant.deleted', parseTypes)
      .option('--tag <tag>', 'only changes of plants with this tag, or that had it (for a deletion, the tag it had)')
      .option(
        '--from <id>',
        'start right after this event (the first column of a line printed before), not now',
        parseEventId,
      ),
    'print one JSON object per line: ' +
      `{"id":"<history>-12","position":"12","type":"plant.created","plant":{${PLANT_KEYS.map((key) => `"${key}":...`).join(',')}}} ` +
      '(ids as exact numbers; a change of the tag adds "previousTag")',
  ).action(async (options: WatchOptions) =>
    run(async () => {
      const client = clientFor(options);
      const stop = new AbortController();
      const interrupted = () => stop.abort();
      // A reader that went away (| head) wanted no more: not a failure either.
      const closed = (error: NodeJS.ErrnoException) => {
        if (error.code === 'EPIPE') stop.abort();
      };
      process.once('SIGINT', interrupted).once('SIGTERM', interrupted);
      process.stdout.on('error', closed);
      try {
        const changes = client.watchChanges({
          ...(options.types === undefined ? {} : { types: options.types }),
          ...(options.tag === undefined ? {} : { tag: options.tag }),
          ...(options.from === undefined ? {} : { after: options.from }),
          signal: stop.signal,
          onReconnect: ({ reason, delayMs }) =>
            process.stderr.write(`plantstore: ${reason}; reconnecting in ${(delayMs / 1000).toFixed(1)} s\n`),
        });
        for await (const change of changes) {
          // Holding back while stdout is full, rather than buffering without bound.
          if (!process.stdout.write(lineOf(change, options.json === true)))
            await once(process.stdout, 'drain', { signal: stop.signal }).catch(() => {});
        }
      } finally {
        process.off('SIGINT', interrupted).off('SIGTERM', interrupted);
        process.stdout.off('error', closed);
      }
    }),
  );
}
