/**
 * POST /plants/import: read line by line as it arrives (memory stays flat for any size),
 * staged in chunks, and committed as one transaction, so a 200 means it is durable and a
 * client that goes away mid-upload leaves nothing behind. Lines are read in short turns
 * (turns.ts), so no body keeps the event loop from other requests.
 */
import type { FastifyRequest } from 'fastify';
import { failure } from '../../http/errors.js';
import { assertNoCodings, assertUtf8Charset } from '../../http/json-body.js';
import { streamedText, type TypedRoutes } from '../../http/type-provider.js';
import type { ImportMode, ImportOutcome, ImportRow, PlantImport } from '../../store/types.js';
import { bearerAuth } from '../../tokens/auth.js';
import type { PerTokenPlaces } from '../../tokens/per-token-places.js';
import { Errors } from '../../http/errors.js';
import { csvRows, ndjsonRows, type ImportProblem, type LineResult } from './import-rows.js';
import { linesOf, type Line } from './lines.js';
import { turns } from './turns.js';
import { UploadCutOff, uploadedBytes } from './upload.js';
import { plantFieldSchema } from '../schemas.js';
import {
  OPTIONAL_PLANT_KEYS,
  PLANT_CONTENT_KEYS,
  REQUIRED_CONTENT_KEYS,
  type PlantContentKey,
} from '../../domain/plant.js';
import { CONTENT_FIELDS_OR, CSV_COLUMNS_TEXT, nounOf, OPTIONAL_COLUMNS_TEXT } from '../../domain/plant-words.js';
import {
  examplePlant,
  OPTIONAL_FIELDS_OR,
  REQUIRED_COLUMNS_OR,
  REQUIRED_COLUMNS_TEXT,
} from '../../domain/plant-words.js';

export const NDJSON = 'application/x-ndjson';
export const CSV = 'text/csv';

/** Plants per staged chunk. */
const STAGE_CHUNK = 1000;
/** Problems a 200 in skip mode lists (all are counted in `skipped`). */
export const REPORTED_PROBLEMS = 1000;
/** Problems an Error record's message names. */
const PROBLEMS_IN_MESSAGE = 10;

const ImportQuery = {
  type: 'object',
  properties: {
    mode: {
      type: 'string',
      enum: ['all', 'skip'],
      default: 'all',
      description:
        '`all` (the default): all or nothing; if any line is invalid or conflicts, nothing is stored and the answer (400 or 409) names the ' +
        `first problems with their line numbers. \`skip\`: the valid lines are stored; the others are reported (the first ${REPORTED_PROBLEMS}) and counted.`,
    },
  },
} as const;

const ImportSummary = {
  type: 'object',
  required: ['created', 'unchanged', 'skipped', 'problems'],
  additionalProperties: false,
  properties: {
    created: { type: 'integer', description: 'Plants created (each with its plant.created event).' },
    unchanged: {
      type: 'integer',
      description: 'Lines identical to a plant already stored (or to an earlier line): a safe retry, nothing written.',
    },
    skipped: {
      type: 'integer',
      description:
        'Lines not imported (mode=skip): invalid, or conflicting with a stored plant or an earlier line. 0 in mode all.',
    },
    problems: {
      type: 'array',
      description: `The first ${REPORTED_PROBLEMS} skipped lines, by line number, each with the Error record create would have answered.`,
      items: {
        type: 'object',
        required: ['line', 'error', 'message'],
        additionalProperties: false,
        properties: {
          line: { type: 'integer', description: 'The line number in the body (1 is the first; in CSV, the header).' },
          error: { type: 'integer', format: 'int32', description: 'The catalogue code, as in an Error record.' },
          message: { type: 'string' },
        },
      },
    },
  },
} as const;

const lineDescription = (what: string) => ({
  description:
    `${what} UTF-8 (a byte order mark starting the body is dropped; one starting a later line is that line's text); a line is at ` +
    'most 16 KiB; blank lines are skipped. The whole body is at most IMPORT_LIMIT bytes.',
});

/** One line of each import format, as a schema (the document's `x-itemSchema`). */
const ImportLineSchemas = {
  [NDJSON]: { $ref: '#/components/schemas/NewPlant', description: 'One line: a NewPlant, as `POST /plants` takes it.' },
  [CSV]: {
    type: 'object',
    description:
      `One record after the header, read by the header's column names (the header itself is \`${CSV_COLUMNS_TEXT}\` in the ` +
      `export; ${OPTIONAL_COLUMNS_TEXT} may be left out). Cells are text: \`id\` is written in decimal.`,
    required: ['id', ...REQUIRED_CONTENT_KEYS],
    properties: {
      id: { type: 'string', pattern: '^-?(0|[1-9][0-9]{0,18})$', description: 'The int64 id, in decimal.' },
      ...Object.fromEntries(PLANT_CONTENT_KEYS.map((key) => [key, csvCellSchema(key)])),
    },
  },
} as const;

/** A field's CSV cell: the field's rules; for an optional field an empty cell too, which means none. */
function csvCellSchema(key: PlantContentKey): object {
  const { type, minLength, maxLength, pattern } = plantFieldSchema(key);
  const noun = nounOf(key);
  if (!OPTIONAL_PLANT_KEYS.has(key))
    return { type, minLength, maxLength, pattern, description: `The ${noun} (the same rules as NewPlant.${key}).` };
  const description = `The ${noun} (the same rules as NewPlant.${key}); an empty cell means no ${noun}.`;
  return { type, maxLength, pattern, description };
}

function isCsv(request: FastifyRequest): boolean {
  return (request.headers['content-type'] ?? '').toLowerCase().startsWith(CSV);
}

function readerFor(request: FastifyRequest): (line: Line) => LineResult {
  return isCsv(request) ? csvRows() : ndjsonRows();
}

/** The message of a 400/409: the first problems, and how many there are. */
function summary(problems: readonly ImportProblem[], total: number): string {
  const named = problems
    .slice(0, PROBLEMS_IN_MESSAGE)
    .map((problem) => `line ${problem.line}: ${problem.message}`)
    .join('; ');
  const more = total > PROBLEMS_IN_MESSAGE ? ` (${total} lines in all)` : '';
  return `${named}${more}`;
}

function conflictProblems(outcome: ImportOutcome): ImportProblem[] {
  return outcome.conflicts.map(({ line, id }) => ({
    line,
    error: Errors.PLANT_CONFLICT.code,
    message: failure('PLANT_CONFLICT', [id]).message,
  }));
}

/** Reads, checks and stages every line; returns the problems found (the first REPORTED_PROBLEMS) and their count. */
async function stageLines(
  body: AsyncIterable<Uint8Array>,
  limit: number,
  read: (line: Line) => LineResult,
  staging: PlantImport,
  mode: ImportMode,
) {
  const problems: ImportProblem[] = [];
  let problemCount = 0;
  let chunk: ImportRow[] = [];
  // One chunk is staged while the next is read; its failure is met at the next await.
  let staged: Promise<void> = Promise.resolve();
  const flush = async () => {
    await staged;
    staged = staging.stage(chunk);
    staged.catch(() => {}); // awaited below; this keeps it from being reported unhandled meanwhile
    chunk = [];
  };
  // Every line takes its share of a turn, plant or not: a body of lines that give no plant must not hold the event
  // loop.
  const turn = turns();
  for await (const line of linesOf(body, limit)) {
    if (turn.due()) await turn.next();
    const result = read(line);
    if (result === undefined) continue;
    if ('problem' in result) {
      problemCount += 1;
      if (problems.length < REPORTED_PROBLEMS) problems.push(result.problem);
      continue;
    }
    // All or nothing with a problem already found: nothing will be stored, so nothing more is staged.
    if (mode === 'all' && problemCount > 0) continue;
    chunk.push(result.row);
    if (chunk.length === STAGE_CHUNK) await flush();
  }
  if (chunk.length > 0) await flush();
  await staged;
  return { problems, problemCount };
}

/** Stages every line, then commits the import: the 200's summary, or the 400 or 409 naming the first problems. */
async function importLines(
  lines: AsyncIterable<Uint8Array>,
  limit: number,
  read: (line: Line) => LineResult,
  staging: PlantImport,
  mode: ImportMode,
) {
  const { problems, problemCount } = await stageLines(uploadedBytes(lines), limit, read, staging, mode).catch(
    (error: unknown) => {
      // The client went away mid-upload: nothing was stored, and nobody is left to tell. (The import's own refusals,
      // met before the body's end, are answered as themselves.)
      if (error instanceof UploadCutOff) throw failure('BAD_REQUEST', ['the upload was cut off; nothing was imported']);
      throw error;
    },
  );
  if (mode === 'all' && problemCount > 0) throw failure('IMPORT_INVALID', [summary(problems, problemCount)]);
  const outcome = await staging.apply(mode, REPORTED_PROBLEMS);
  if (outcome.kind === 'rejected')
    throw failure('IMPORT_CONFLICT', [summary(conflictProblems(outcome), outcome.conflictCount)]);
  const reported = [...problems, ...conflictProblems(outcome)]
    .sort((a, b) => a.line - b.line)
    .slice(0, REPORTED_PROBLEMS);
  return {
    created: outcome.created,
    unchanged: outcome.unchanged,
    skipped: problemCount + outcome.conflictCount,
    problems: reported,
  };
}

export const plantImportRoutes =
  (bulk: PerTokenPlaces): TypedRoutes =>
  async (app) => {
    const limit = app.config.importLimitBytes;
    // In this route's context only: the body is handed over as the stream it is.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser([NDJSON, CSV], (request, payload, done) => {
      try {
        assertNoCodings(request);
        assertUtf8Charset(request, isCsv(request) ? 'CSV' : 'NDJSON');
        done(null, payload);
      } catch (error) {
        done(error as Error, undefined);
      }
    });
    app.addContentTypeParser('*', (request, _payload, done) => {
      const sent = request.headers['content-type'];
      done(
        failure('UNSUPPORTED_MEDIA_TYPE', [
          `an import must be sent as Content-Type: ${NDJSON} or ${CSV} (${sent === undefined ? 'none was sent' : `got '${sent.slice(0, 100)}'`})`,
        ]),
        undefined,
      );
    });

    app.post(
      '/plants/import',
      {
        bodyLimit: limit,
        schema: {
          operationId: 'importPlants',
          summary: 'Import plants (NDJSON or CSV)',
          description:
            'Creates many plants in one request. The body is streamed: send any number of lines, up to `IMPORT_LIMIT` bytes. Each line is ' +
            'checked by the rules of `POST /plants`: a valid new plant is created; one identical to a stored plant (or to an earlier line) is ' +
            `unchanged, a safe retry; one whose id exists with another ${CONTENT_FIELDS_OR} conflicts; an invalid one gets the message create ` +
            'would give.\n\n' +
            'By default the import is all or nothing: if any line is invalid (400) or conflicts (409), nothing is stored, and the Error record ' +
            'names the first problems with their line numbers. With `mode=skip` the valid lines are stored and the others reported. A 200 means ' +
            'everything it counts as created is durably committed, with a `plant.created` event each. A client that disconnects mid-upload, or ' +
            'a crash of the service, leaves nothing of the import behind.\n\n' +
            '`GET /plants/export` writes what this reads: an export imported into an empty store gives the identical plants.',
          tags: ['plants'],
          security: bearerAuth('plants:write'),
          querystring: ImportQuery,
          body: streamedText('The plants, one per line.', {
            [NDJSON]: {
              schema: lineDescription(`One NewPlant JSON object per line (\`${JSON.stringify(examplePlant(1))}\`),`),
            },
            [CSV]: {
              schema: lineDescription(
                `RFC 4180 CSV with a header row naming the columns ${REQUIRED_COLUMNS_TEXT} and optionally ${OPTIONAL_COLUMNS_TEXT}, ` +
                  `each once, in any order (others are ignored; a header without ${REQUIRED_COLUMNS_OR}, or ` +
                  `naming one of the plant's columns twice, refuses the import: 400 naming line 1); an empty cell of an optional ` +
                  `${OPTIONAL_FIELDS_OR} means none; fields with a comma or a double quote are quoted, quotes doubled; a text ` +
                  'cell starting with a single quote followed by `=`, `+`, `-`, `@`, a tab, a CR or a single quote loses that ' +
                  "first quote (the export's formula escape). One record per line,",
              ),
            },
          }),
          response: { 200: { ...ImportSummary, description: 'The import is committed.' } },
        },
        config: {
          bodyItemSchemas: ImportLineSchemas,
          failures: [
            'IMPORT_INVALID',
            'IMPORT_CONFLICT',
            'BODY_TOO_LARGE',
            'UNSUPPORTED_MEDIA_TYPE',
            'TOO_MANY_BULK',
            'STORE_UNAVAILABLE',
          ],
          // Not bound by REQUEST_TIMEOUT_MS: the body must keep arriving at IMPORT_MIN_RATE instead.
          steadyUpload: true,
        },
      },
      async (request) => {
        const { mode } = request.query;
        const body: unknown = request.body;
        const lines: AsyncIterable<Uint8Array> = isByteStream(body) ? body : emptyStream();
        const release = bulk.take(request.token?.id ?? '', (held) => failure('TOO_MANY_BULK', [held]));
        try {
          const staging = await app.store.plants.beginImport();
          try {
            return await importLines(lines, limit, readerFor(request), staging, mode);
          } finally {
            await staging.abort().catch(() => {});
          }
        } finally {
          release();
        }
      },
    );
  };

function isByteStream(value: unknown): value is AsyncIterable<Uint8Array> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

async function* emptyStream(): AsyncGenerator<Uint8Array> {}
