/**
 * `plantstore plants import FILE|-` and `plantstore plants export`, streamed both ways so a
 * file of any size is never held in memory. An export to a file is written under a temporary
 * name and renamed once synced, so an interrupted one never leaves a truncated file that looks whole.
 */
import { CSV_COLUMNS_TEXT, SEARCHED_FIELDS_OR } from '../domain/plant-words.js';
import { createReadStream, createWriteStream, fstatSync, rmSync } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Option, type Command } from 'commander';
import type { BulkFormat, ImportSummary } from '../../packages/client/src/index.js';
import { stringifyJson } from '../../packages/client/src/json.js';
import { ConfigError } from '../config/index.js';
import type { ConnectionOptions, PlantsCommandKit } from './plants-command-kit.js';
import { counted, progressReporter } from './progress.js';

const FORMATS: readonly BulkFormat[] = ['ndjson', 'csv'];
const FORMAT_OF_EXTENSION: Readonly<Record<string, BulkFormat>> = {
  '.ndjson': 'ndjson',
  '.jsonl': 'ndjson',
  '.csv': 'csv',
};

const formatOfName = (file: string): BulkFormat | undefined => FORMAT_OF_EXTENSION[extname(file).toLowerCase()];

// ---- import -----------------------------------------------------------------

/** The size to show progress against: a regular file's (stdin too, when redirected from one). */
async function sizeOf(file: string): Promise<number | undefined> {
  const stats = file === '-' ? fstatSync(0) : await stat(file);
  return stats.isFile() ? stats.size : undefined;
}

function printSummary(summary: ImportSummary, json: boolean): void {
  if (json) {
    process.stdout.write(`${stringifyJson(summary)}\n`);
    return;
  }
  const lines = [`created ${summary.created}, unchanged ${summary.unchanged}, skipped ${summary.skipped}`];
  for (const problem of summary.problems) lines.push(`line ${problem.line}: ${problem.message}`);
  const unlisted = summary.skipped - summary.problems.length;
  if (unlisted > 0) lines.push(`(${unlisted} more skipped lines not listed)`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

interface ImportOptions extends ConnectionOptions {
  format?: BulkFormat;
  mode?: 'all' | 'skip';
}

// ---- export -----------------------------------------------------------------

async function toStdout(bytes: AsyncIterable<Uint8Array>): Promise<void> {
  try {
    await pipeline(bytes, process.stdout, { end: false });
  } catch (error) {
    // A reader that stopped early (| head) wanted no more: not a failure.
    if (!(error instanceof Error && 'code' in error && error.code === 'EPIPE')) throw error;
  }
}

/** Writes `file` whole or not at all: a temporary file beside it, synced, then renamed over it. */
async function replaceFile(file: string, bytes: AsyncIterable<Uint8Array>): Promise<void> {
  const temp = join(dirname(file), `.${basename(file)}.${process.pid}.partial`);
  const abandon = (signal: NodeJS.Signals) => {
    rmSync(temp, { force: true });
    process.kill(process.pid, signal); // this listener is gone: the process ends of the signal, as it would have
  };
  process.once('SIGINT', abandon).once('SIGTERM', abandon);
  try {
    // flush: synced before it is closed, so the rename never exposes a file whose bytes are not on disk yet.
    // 0600, as the store's own files: the service's user alone reads what was exported.
    await pipeline(bytes, createWriteStream(temp, { flags: 'wx', flush: true, mode: 0o600 }));
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  } finally {
    process.off('SIGINT', abandon).off('SIGTERM', abandon);
  }
}

/** Counts the bytes and lines that pass, for the summary after an export to a file. */
interface Tally {
  bytes: number;
  lines: number;
}

async function* tallied(bytes: AsyncIterable<Uint8Array>, tally: Tally): AsyncGenerator<Uint8Array> {
  for await (const chunk of bytes) {
    tally.bytes += chunk.byteLength;
    for (let at = chunk.indexOf(LF); at !== -1; at = chunk.indexOf(LF, at + 1)) tally.lines += 1;
    yield chunk;
  }
}

const LF = 0x0a;

/** `exported 1,234 plants to plants.csv (56,789 bytes)`: a CSV's first line is its header; names hold no newlines. */
function exportSummary(file: string, format: BulkFormat, tally: Tally): string {
  const plants = format === 'csv' ? Math.max(0, tally.lines - 1) : tally.lines;
  const count = plants.toLocaleString('en-US');
  return `exported ${count} ${plants === 1 ? 'plant' : 'plants'} to ${file} (${tally.bytes.toLocaleString('en-US')} bytes)\n`;
}

interface ExportOptions extends ConnectionOptions {
  format?: BulkFormat;
  output?: string;
  search?: string;
  tag: string[];
}

// ---- commands ---------------------------------------------------------------

const formatOption = (description: string) => new Option('--format <format>', description).choices(FORMATS);

export function registerPlantsBulkCommands(
  plants: Command,
  { withConnectionOptions, clientFor, run, collect }: PlantsCommandKit,
): void {
  withConnectionOptions(
    plants
      .command('import')
      .description(
        'Create many plants from an NDJSON or CSV file (or stdin), streamed: all or nothing, or --mode skip.',
      )
      .argument(
        '<file>',
        `an NDJSON (.ndjson, .jsonl) or CSV (.csv, header row ${CSV_COLUMNS_TEXT}) file, or - for stdin`,
      )
      .addOption(formatOption('ndjson or csv; needed for stdin, else the file name decides'))
      .addOption(
        new Option(
          '--mode <mode>',
          'all (default): if any line is invalid or conflicts, nothing is stored; skip: the valid lines are stored, the others listed',
        ).choices(['all', 'skip']),
      ),
    'print the summary as JSON: {"created","unchanged","skipped","problems":[{"line","error","message"}]}',
  ).action(async (file: string, options: ImportOptions) =>
    run(async () => {
      const client = clientFor(options);
      const format = options.format ?? formatOfName(file);
      if (format === undefined) {
        throw new ConfigError(
          file === '-'
            ? 'reading stdin needs --format ndjson or --format csv'
            : `cannot tell the format of ${file} from its name (.ndjson, .jsonl or .csv): pass --format`,
        );
      }
      const progress = progressReporter(await sizeOf(file));
      let summary: ImportSummary;
      try {
        const source = file === '-' ? process.stdin : createReadStream(file);
        summary = await client.importPlants(counted(source, progress), {
          format,
          ...(options.mode === undefined ? {} : { mode: options.mode }),
        });
      } finally {
        progress.stop();
      }
      printSummary(summary, options.json === true);
    }),
  );

  withConnectionOptions(
    plants
      .command('export')
      .description(
        'Write every plant (or those --search and --tag find) in id order, as NDJSON or CSV, to stdout or a file.',
      )
      .addOption(
        formatOption(
          'ndjson (the default) or csv; with --output, a .csv or .ndjson name decides when this is left out',
        ),
      )
      .option('--output <file>', 'write to this file instead of stdout (replaced only once the export is complete)')
      .option(
        '--search <words>',
        `only plants whose ${SEARCHED_FIELDS_OR} has a word starting with each of these (case and accents ignored)`,
      )
      .option('--tag <tag>', 'only plants with exactly this tag; repeat it for any of several', collect, []),
    false,
  ).action(async (options: ExportOptions) =>
    run(async () => {
      const format =
        options.format ?? (options.output === undefined ? undefined : formatOfName(options.output)) ?? 'ndjson';
      const bytes = await clientFor(options).exportPlantsText({
        format,
        ...(options.search === undefined ? {} : { q: options.search }),
        ...(options.tag.length === 0 ? {} : { tag: options.tag }),
      });
      if (options.output === undefined) await toStdout(bytes);
      else {
        const tally = { bytes: 0, lines: 0 };
        await replaceFile(options.output, tallied(bytes, tally));
        process.stdout.write(exportSummary(options.output, format, tally));
      }
    }),
  );
}
