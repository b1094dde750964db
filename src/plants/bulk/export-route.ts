/**
 * GET /plants/export, from one snapshot, streamed: the store reads a chunk only when the
 * client has taken the previous one, so a slow reader holds one chunk in memory. It runs at
 * most EXPORT_TIMEOUT_MS, since the snapshot holds back the store's cleanup while it runs.
 */
import { CSV_COLUMNS_TEXT, JSON_MEMBERS, OPTIONAL_FIELDS_OR } from '../../domain/plant-words.js';
import { Readable } from 'node:stream';
import { failure } from '../../http/errors.js';
import { streamedText, type TypedRoutes } from '../../http/type-provider.js';
import type { ExportChunk, PlantFilter } from '../../store/types.js';
import { bearerAuth } from '../../tokens/auth.js';
import type { PerTokenPlaces } from '../../tokens/per-token-places.js';
import { FindQueryProperties, termsOf } from '../find-parameters.js';
import { EXPORT_MEDIA_TYPES, exportHeader, formatChunk, type ExportFormat } from './export-format.js';
import { negotiatedFormat } from './export-negotiation.js';

const ExportQuery = {
  type: 'object',
  properties: {
    format: {
      type: 'string',
      enum: ['ndjson', 'csv'],
      description:
        'NDJSON or CSV. Without it the Accept header chooses (NDJSON when both are accepted alike, and without Accept). ' +
        'With it, Accept must still accept that format, else 406.',
    },
    q: FindQueryProperties.q,
    tag: FindQueryProperties.tag,
  },
} as const;

const ExportHeaders = {
  type: 'object',
  properties: {
    accept: {
      type: 'string',
      description:
        'The media types the client takes (RFC 9110 12.5.1, q-values and wildcards): `application/x-ndjson`, `text/csv`, or ' +
        'both. When it accepts neither (`Accept: application/json`, `Accept: text/csv;q=0`), the answer is 406.',
    },
  },
} as const;

/** Ends an export that ran longer than EXPORT_TIMEOUT_MS: the response is cut, so the client sees an incomplete body,
 * not a short export. */
class ExportTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`the export ran longer than EXPORT_TIMEOUT_MS (${timeoutMs} ms) and was ended`);
    this.name = 'ExportTimeoutError';
  }
}

/** The export's text, chunk by chunk. (The route lets the store's snapshot go when the body closes.) */
async function* exportText(
  format: ExportFormat,
  chunks: AsyncIterator<ExportChunk>,
  first: IteratorResult<ExportChunk>,
): AsyncGenerator<string> {
  yield exportHeader(format);
  for (let next = first; next.done !== true; next = await chunks.next()) yield formatChunk(format, next.value);
}

export const plantExportRoutes =
  (bulk: PerTokenPlaces): TypedRoutes =>
  async (app) => {
    app.get(
      '/plants/export',
      {
        schema: {
          operationId: 'exportPlants',
          summary: 'Export plants (NDJSON or CSV)',
          description:
            `Every plant, or those \`q\` and \`tag\` find (as on \`GET /plants\`), in id order: NDJSON, one \`${JSON_MEMBERS}\` per line, or CSV ` +
            `with an \`${CSV_COLUMNS_TEXT}\` header (RFC 4180; an absent ${OPTIONAL_FIELDS_OR} is an empty cell; a text cell starting with ` +
            '`=`, `+`, `-`, `@`, a tab, a CR or a single quote is written quoted behind a single quote, so that no spreadsheet runs ' +
            'it as a formula). The whole ' +
            'export is one consistent snapshot of the store: plants created, changed or deleted while it streams are not in it. ' +
            'It is streamed, at the pace the client reads, for at most ' +
            '`EXPORT_TIMEOUT_MS` (an hour by default); an export still running then is cut off, its body incomplete. ' +
            '`POST /plants/import` reads it back. `HEAD` answers the headers without reading the plants. The format is `format`, ' +
            'else what the Accept header prefers; an Accept that takes neither format gets 406.',
          tags: ['plants'],
          security: bearerAuth('plants:read'),
          querystring: ExportQuery,
          headers: ExportHeaders,
          response: {
            200: streamedText('The plants, streamed.', {
              'application/x-ndjson': {
                schema: { type: 'string', description: 'One StoredPlant JSON object per line.' },
              },
              'text/csv': { schema: { type: 'string', description: 'A header row, then one record per plant.' } },
            }),
          },
        },
        config: { failures: ['NOT_ACCEPTABLE', 'TOO_MANY_BULK', 'STORE_UNAVAILABLE'] },
      },
      async (request, reply) => {
        const { format, q, tag: tags } = request.query;
        const filter: PlantFilter = { tags, terms: termsOf(q) };
        // Before anything else can fail: a 406 varies with Accept too, and an export is never stored by a cache.
        const vary = reply.getHeader('vary');
        void reply.header('vary', vary === undefined ? 'Accept' : `${String(vary)}, Accept`);
        void reply.header('cache-control', 'no-store');
        const chosen = negotiatedFormat(format, request.headers.accept);
        const headers = {
          'content-type': EXPORT_MEDIA_TYPES[chosen],
          'content-disposition': `attachment; filename="plants.${chosen}"`,
        };
        if (request.method === 'HEAD') {
          // Fastify's HEAD route runs this handler and would read a streamed body to its end, to drop it: the headers
          // alone, and whether the store can answer, without a snapshot.
          await app.store.ping();
          return reply.headers(headers).send();
        }
        const release = bulk.take(request.token?.id ?? '', (held) => failure('TOO_MANY_BULK', [held]));
        const chunks = app.store.plants.exportPlants(filter)[Symbol.asyncIterator]();
        let first: IteratorResult<ExportChunk>;
        try {
          // The first chunk before the headers: a store that cannot serve the export gets its Error record, not a cut
          // stream.
          first = await chunks.next();
        } catch (error) {
          release();
          throw error;
        }
        const body = Readable.from(exportText(chosen, chunks, first), { objectMode: false });
        const timeoutMs = app.config.exportTimeoutMs;
        const timeout = setTimeout(() => {
          request.log.warn({ timeoutMs }, 'export: cut off, it ran longer than EXPORT_TIMEOUT_MS');
          body.destroy(new ExportTimeoutError(timeoutMs));
        }, timeoutMs);
        // The store's export (its snapshot; on PostgreSQL a connection of the pool) is let go when the body closes,
        // however
        // it closes: read to the end, the client gone mid-way, or gone before the first byte. In that last case Fastify
        // destroys a body that never started, and a `finally` in exportText would never run.
        body.once('close', () => {
          clearTimeout(timeout);
          release();
          Promise.resolve(chunks.return?.()).catch((error: unknown) =>
            request.log.warn({ err: error }, 'export: letting the snapshot go failed'),
          );
        });
        return reply.headers(headers).send(body);
      },
    );
  };
