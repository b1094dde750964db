/**
 * POST /plants/import and GET /plants/export, streamed both ways so neither is held in memory.
 * A bulk call lasts as long as its data takes, so `timeoutMs` bounds only the wait for an
 * export to start; `signal` gives up on either.
 */
import type { Client } from 'openapi-fetch';
import { errorFromResponse, PlantStoreConnectionError, PlantStoreError } from './errors.js';
import type { PlantFilter } from './filter.js';
import { parseJson } from './json.js';
import type { components, operations, paths } from './openapi-types.js';

type Plant = components['schemas']['StoredPlant'];

/** What a committed import answers. */
export type ImportSummary = operations['importPlants']['responses'][200]['content']['application/json'];
/** A line an import in skip mode left out: its number, and the Error record create would have answered. */
export type ImportProblem = ImportSummary['problems'][number];

export type BulkFormat = 'ndjson' | 'csv';

/** NDJSON (one NewPlant per line) or CSV (a header row naming id, name and tag), as text, bytes or a stream of chunks.
 * */
export type ImportBody = string | Uint8Array | AsyncIterable<Uint8Array | string>;

export interface ImportOptions {
  /** 'ndjson' when left out. */
  readonly format?: BulkFormat;
  /** 'all' (the service's default): all or nothing. 'skip': the valid lines are stored, the others reported. */
  readonly mode?: 'all' | 'skip';
  readonly signal?: AbortSignal;
}

export interface ExportOptions extends PlantFilter {
  readonly signal?: AbortSignal;
}

export interface BulkOperations {
  /** Creates many plants in one request; a 400 or 409 (all or nothing) throws PlantStoreError naming the lines. */
  importPlants(body: ImportBody, options?: ImportOptions): Promise<ImportSummary>;
  /** Every plant matching `q` and `tag`, in id order, from one snapshot of the store. */
  exportPlants(options?: ExportOptions): AsyncIterable<Plant>;
  /** The export's bytes (NDJSON or CSV), once the service has started answering; read them to the end or stop
   * iterating. */
  exportPlantsText(options?: ExportOptions & { readonly format?: BulkFormat }): Promise<AsyncIterable<Uint8Array>>;
}

const MEDIA_TYPES: Readonly<Record<BulkFormat, string>> = {
  ndjson: 'application/x-ndjson',
  csv: 'text/csv; charset=utf-8',
};

/** Where a failed source (an unreadable file) is kept, so it is thrown as itself rather than as "cannot reach". */
interface SourceFailure {
  error?: unknown;
}

async function* bytesOf(
  chunks: AsyncIterable<Uint8Array | string>,
  failure: SourceFailure,
): AsyncGenerator<Uint8Array> {
  const encoder = new TextEncoder();
  try {
    for await (const chunk of chunks) yield typeof chunk === 'string' ? encoder.encode(chunk) : chunk;
  } catch (error) {
    failure.error = error;
    throw error;
  }
}

function requestBody(body: ImportBody, failure: SourceFailure): string | Uint8Array | ReadableStream<Uint8Array> {
  return typeof body === 'string' || body instanceof Uint8Array ? body : ReadableStream.from(bytesOf(body, failure));
}

/** The lines of an NDJSON stream; one left unfinished at the end means the stream was cut off. */
async function* linesOf(bytes: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let pending = '';
  for await (const chunk of bytes) {
    const lines = (pending + decoder.decode(chunk, { stream: true })).split('\n');
    pending = lines.pop() ?? '';
    yield* lines;
  }
  if (pending + decoder.decode() !== '') throw new Error('the export ended in the middle of a line: it was cut off');
}

export function bulkOperations(api: Client<paths>, baseUrl: string, timeoutMs: number): BulkOperations {
  /** What a failed fetch throws: the caller's own abort as it is, anything else as "cannot reach". */
  const unreachable = (error: unknown, signal: AbortSignal | undefined): unknown => {
    if (signal?.aborted === true) return error;
    if (error instanceof DOMException && error.name === 'TimeoutError')
      return new PlantStoreConnectionError(baseUrl, new Error(`no answer within ${timeoutMs} ms`));
    return new PlantStoreConnectionError(baseUrl, error);
  };

  /** The body's chunks; a connection lost mid-way is a PlantStoreConnectionError. */
  async function* chunksOf(
    body: ReadableStream<Uint8Array> | null,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<Uint8Array> {
    if (body === null) return;
    try {
      yield* body;
    } catch (error) {
      throw unreachable(error, signal);
    }
  }

  const exportPlantsText: BulkOperations['exportPlantsText'] = async ({ format = 'ndjson', q, tag, signal } = {}) => {
    // A timer rather than AbortSignal.timeout: it must stop once the answer starts, or it would cut off a long export.
    const timer = new AbortController();
    const timeout = setTimeout(
      () => timer.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError')),
      timeoutMs,
    );
    try {
      const query = { format, ...(q === undefined ? {} : { q }), ...(tag === undefined ? {} : { tag: [tag].flat() }) };
      const outcome = await api.GET('/plants/export', {
        params: { query },
        parseAs: 'stream',
        signal: signal === undefined ? timer.signal : AbortSignal.any([timer.signal, signal]),
      });
      if (!outcome.response.ok) throw errorFromResponse(outcome.response, outcome.error);
      return chunksOf(outcome.data ?? null, signal);
    } catch (error) {
      throw error instanceof PlantStoreError ? error : unreachable(error, signal);
    } finally {
      clearTimeout(timeout);
    }
  };

  return {
    async importPlants(body, { format = 'ndjson', mode, signal } = {}) {
      const failure: SourceFailure = {};
      const outcome = await api
        .POST('/plants/import', {
          params: { query: mode === undefined ? {} : { mode } },
          body: requestBody(body, failure),
          bodySerializer: (value) => value,
          headers: { 'content-type': MEDIA_TYPES[format] },
          parseAs: 'text',
          // Needed to send a stream; harmless for a string or bytes.
          duplex: 'half',
          ...(signal === undefined ? {} : { signal }),
        })
        .catch((error: unknown) => {
          throw failure.error ?? unreachable(error, signal);
        });
      if (!outcome.response.ok) throw errorFromResponse(outcome.response, outcome.error);
      // The service answers with its documented schema; parsing trusts it.
      return parseJson(outcome.data ?? 'null') as ImportSummary;
    },

    async *exportPlants(options = {}) {
      for await (const line of linesOf(await exportPlantsText({ ...options, format: 'ndjson' }))) {
        // Trusted as in importPlants: each line is a StoredPlant.
        if (line !== '') yield parseJson(line) as Plant;
      }
    },

    exportPlantsText,
  };
}
