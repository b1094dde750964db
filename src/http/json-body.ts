/**
 * The request body parser: strict UTF-8, lossless for numbers. `JSON.parse` rounds to doubles, so only bodies
 * with a long run of digits or an exponent go through lossless-json; with at most 15 significant digits a
 * literal is an integer iff its double is, and such integers are below 2^53.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { parse as parseLossless } from 'lossless-json';
import { ApiError, failure } from './errors.js';
import { exactJsonNumber } from './int64.js';

const NEEDS_LOSSLESS_PARSE = /[0-9.]{16}|[0-9][eE]/;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function parseJsonText(text: string): unknown {
  if (!NEEDS_LOSSLESS_PARSE.test(text)) return JSON.parse(text);
  return parseLossless(text, null, {
    parseNumber: exactJsonNumber,
    // JSON.parse keeps the last of duplicate keys; do the same on both paths.
    onDuplicateKey: ({ newValue }) => newValue,
  });
}

export function parseJsonBody(body: Buffer): unknown {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw failure('INVALID_JSON', ['UTF-8']);
  }
  return parseJsonOrFail(text);
}

/** parseJsonText, a failure becoming the INVALID_JSON Error record that says why (a body's, or an import line's). */
export function parseJsonOrFail(text: string): unknown {
  try {
    return parseJsonText(text);
  } catch (error) {
    const reason = error instanceof RangeError ? 'it is nested too deeply' : (error as Error).message;
    throw failure('INVALID_JSON', [`JSON: ${reason}`]);
  }
}

const CHARSET = /;\s*charset\s*=\s*"?([^";\s]+)"?/i;

/** Refuses a charset other than UTF-8; `format` names what the body should be (JSON, or an import's CSV or NDJSON). */
export function assertUtf8Charset(request: FastifyRequest, format = 'JSON'): void {
  const charset = CHARSET.exec(request.headers['content-type'] ?? '')?.[1];
  if (charset !== undefined && charset.toLowerCase() !== 'utf-8' && charset.toLowerCase() !== 'utf8') {
    throw failure('UNSUPPORTED_MEDIA_TYPE', [`charset ${charset} is not supported: send UTF-8 ${format}`]);
  }
}

/**
 * Codings the service does not undo (Node removes only `chunked`), refused rather than parsed as compressed
 * bytes: 415 with Accept-Encoding: identity for a content coding (RFC 9110 12.5.3), 400 for a transfer coding.
 */
export function assertNoCodings(request: FastifyRequest): void {
  const contentEncoding = request.headers['content-encoding'];
  if (contentEncoding !== undefined && contentEncoding.trim().toLowerCase() !== 'identity') {
    throw failure(
      'UNSUPPORTED_MEDIA_TYPE',
      [`content-encoding ${contentEncoding.slice(0, 100)} is not supported: send the body uncompressed`],
      {
        'accept-encoding': 'identity',
      },
    );
  }
  const transferEncoding = request.headers['transfer-encoding'];
  if (transferEncoding !== undefined && transferEncoding.trim().toLowerCase() !== 'chunked') {
    throw failure('BAD_REQUEST', [
      `transfer coding ${transferEncoding.slice(0, 100)} is not supported: send the body with Content-Length or chunked alone`,
    ]);
  }
}

export const MERGE_PATCH = 'application/merge-patch+json';

/** The Accept-Patch header (RFC 5789 3.1): the patch formats PATCH takes, on its 415 and where PATCH is allowed. */
export const ACCEPT_PATCH = `${MERGE_PATCH}, application/json`;

/** The 415 for a body that is not JSON, naming what was sent. */
export function notJsonError(request: FastifyRequest): ApiError {
  const sent = request.headers['content-type'];
  const what = sent === undefined ? 'no Content-Type was sent' : `got '${sent.slice(0, 100)}'`;
  const patch = request.method === 'PATCH';
  const expected = patch ? `${MERGE_PATCH} or application/json` : 'application/json';
  const headers: Record<string, string> = patch ? { 'accept-patch': ACCEPT_PATCH } : {};
  return failure(
    'UNSUPPORTED_MEDIA_TYPE',
    [`request body must be sent as Content-Type: ${expected} (${what})`],
    headers,
  );
}

/**
 * No Content-Length nor Transfer-Encoding means no body (RFC 9112 6.3), and Content-Length: 0 an empty one:
 * nothing to parse whatever the Content-Type, since many clients label every request (`curl -d ''` as a form).
 */
function hasNoBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return length === '0' || (length === undefined && request.headers['transfer-encoding'] === undefined);
}

/**
 * Makes the strict, lossless parser above the only body parser: every other media
 * type (Fastify's text/plain included) gets 415 unless there is no body. Nothing is
 * read before deciding.
 */
export const jsonBodies = fp(
  async (app: FastifyInstance, { bodyLimit }: { bodyLimit: number }) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (request, _payload, done) => {
      if (hasNoBody(request)) done(null, undefined);
      else done(notJsonError(request), undefined);
    });
    const parse = (
      request: FastifyRequest,
      body: string | Buffer,
      done: (error: Error | null, body?: unknown) => void,
    ) => {
      try {
        assertNoCodings(request);
        assertUtf8Charset(request);
        // A chunked body can be empty too.
        done(null, (body as Buffer).length === 0 ? undefined : parseJsonBody(body as Buffer));
      } catch (error) {
        done(error as Error, undefined);
      }
    };
    app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit }, parse);
    // A JSON Merge Patch (RFC 7396) is JSON; only PATCH takes one.
    app.addContentTypeParser(MERGE_PATCH, { parseAs: 'buffer', bodyLimit }, (request, body, done) => {
      if (request.method === 'PATCH') parse(request, body, done);
      else done(notJsonError(request), undefined);
    });
  },
  { name: 'json-bodies' },
);
