/**
 * The error catalogue: every `Error.error` value, declared once. Codes are stable, never reused, and read as
 * status * 100 + sequence. Call sites name the entry and pass values only; the OpenAPI document lists this table.
 */
import { CONTENT_FIELDS_OR } from '../domain/plant-words.js';

export interface CatalogueEntry {
  readonly code: number;
  readonly status: number;
  readonly meaning: string;
  /** The message the client gets, each `%s` filled with a value by `failure` (@fastify/error's style). */
  readonly message: string;
}

export const Errors = {
  BAD_REQUEST: {
    code: 40000,
    status: 400,
    meaning: 'The request is malformed (bad URL, bad header or another protocol-level problem).',
    message: '%s',
  },
  INVALID_JSON: {
    code: 40001,
    status: 400,
    meaning: 'The request body is not valid JSON, or not valid UTF-8.',
    message: 'request body is not valid %s',
  },
  BODY_REQUIRED: {
    code: 40002,
    status: 400,
    meaning: 'The operation needs a JSON body and the request had none.',
    message: 'request body is required: send a JSON object',
  },
  BODY_NOT_OBJECT: {
    code: 40003,
    status: 400,
    meaning: 'The request body is valid JSON but not a JSON object.',
    message: 'request body must be a JSON object',
  },
  INVALID_FIELD: {
    code: 40004,
    status: 400,
    meaning: 'A field of the request body is missing or invalid; the message names each one and why.',
    message: '%s',
  },
  INVALID_PARAMETER: {
    code: 40005,
    status: 400,
    meaning: 'A path, query or header parameter (such as Last-Event-ID) is invalid; the message names it and why.',
    message: '%s',
  },
  INVALID_WEBHOOK_URL: {
    code: 40006,
    status: 400,
    meaning:
      'The webhook URL is refused: not http(s), malformed, or its host resolves to a private, loopback or reserved address; the message says which.',
    message: 'url refused: %s',
  },
  IMPORT_INVALID: {
    code: 40007,
    status: 400,
    meaning:
      'An import (POST /plants/import) has lines that are not valid plants, and nothing was imported; the message names the first ones with their line numbers. With mode=skip the valid lines are imported instead.',
    message: 'nothing was imported: %s',
  },
  TOKEN_MISSING: {
    code: 40101,
    status: 401,
    meaning: 'No bearer token was sent (Authorization: Bearer <token>).',
    message: 'authentication required: send Authorization: Bearer <token>',
  },
  TOKEN_INVALID: {
    code: 40102,
    status: 401,
    meaning: 'The bearer token is malformed, unknown, revoked or expired.',
    message: '%s',
  },
  EVENTS_TICKET_INVALID: {
    code: 40103,
    status: 401,
    meaning:
      'The ticket given to GET /events is unknown, used already or expired (a ticket opens one stream, soon after POST /events/tickets issued it).',
    message: '%s',
  },
  INSUFFICIENT_SCOPE: {
    code: 40301,
    status: 403,
    meaning: 'The token is valid but lacks the scope this operation needs.',
    message: 'this operation needs a token with the %s scope; this token has: %s',
  },
  TOKEN_BEYOND_CREATOR: {
    code: 40302,
    status: 403,
    meaning:
      'POST /tokens asked for a token that could do more or last longer than the token asking: a token creates only tokens with scopes it has itself and an expiry no later than its own; the message says which.',
    message: 'a token creates only tokens within its own scopes and lifetime: %s',
  },
  ROUTE_NOT_FOUND: {
    code: 40401,
    status: 404,
    meaning: 'No operation exists at this path.',
    message: 'no operation at %s %s',
  },
  PLANT_NOT_FOUND: { code: 40402, status: 404, meaning: 'No plant has this id.', message: 'no plant has id %s' },
  WEBHOOK_NOT_FOUND: {
    code: 40403,
    status: 404,
    meaning: 'No webhook subscription has this id.',
    message: 'no webhook subscription has id %s',
  },
  WEBHOOK_DELIVERY_NOT_FOUND: {
    code: 40404,
    status: 404,
    meaning: 'The webhook subscription has no delivery with this id.',
    message: 'webhook subscription %s has no delivery with id %s',
  },
  TOKEN_NOT_FOUND: {
    code: 40405,
    status: 404,
    meaning: 'No token has this id or name.',
    message: 'no token has id or name %s',
  },
  WEBHOOK_RECOVERY_NOT_FOUND: {
    code: 40406,
    status: 404,
    meaning: 'The webhook subscription has no recovery with this id.',
    message: 'webhook subscription %s has no recovery with id %s',
  },
  METHOD_NOT_ALLOWED: {
    code: 40501,
    status: 405,
    meaning: 'The path exists but not with this method; the Allow header lists the methods it has.',
    message: '%s is not allowed on %s; allowed: %s',
  },
  NOT_ACCEPTABLE: {
    code: 40601,
    status: 406,
    meaning:
      'The Accept header accepts none of the media types the operation answers in (an export: application/x-ndjson, text/csv); the message names them.',
    message: 'this answer is available as %s, which Accept: %s does not accept',
  },
  REQUEST_TIMEOUT: {
    code: 40801,
    status: 408,
    meaning:
      'The client took too long to send the request headers or body (HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS); the connection is closed.',
    message: '%s',
  },
  PLANT_CONFLICT: {
    code: 40901,
    status: 409,
    meaning: `A plant with this id already exists with a different ${CONTENT_FIELDS_OR}.`,
    message: `a plant with id %s already exists with a different ${CONTENT_FIELDS_OR}; delete it first or choose another id`,
  },
  IMPORT_CONFLICT: {
    code: 40902,
    status: 409,
    meaning:
      `An import (POST /plants/import) has lines whose id exists (or appears on an earlier line) with a different ${CONTENT_FIELDS_OR}, ` +
      'and nothing was imported; the message names the first ones with their line numbers. With mode=skip the other lines are imported instead.',
    message: 'nothing was imported: %s',
  },
  TOKEN_NAME_TAKEN: {
    code: 40903,
    status: 409,
    meaning: 'Another token (active, expired or revoked) already has this name; token names are unique.',
    message: "a token named '%s' already exists; choose another name",
  },
  EVENTS_EXPIRED: {
    code: 41001,
    status: 410,
    meaning:
      'GET /events was asked to resume after a position older than the change log keeps (EVENTS_RETENTION_HOURS): changes after it were pruned, so the stream cannot continue without a gap. Read the plants afresh, then stream from now (no Last-Event-ID).',
    message: '%s',
  },
  EVENTS_HISTORY_CHANGED: {
    code: 41002,
    status: 410,
    meaning:
      'GET /events was asked to resume after an event id of another history of the change log: the store was restored from a backup or replaced by a copy since (its positions are handed out again), or the id is a bare position without its history. The stream cannot continue from it. Read the plants afresh, then stream from now (no Last-Event-ID).',
    message: '%s',
  },
  PRECONDITION_FAILED: {
    code: 41201,
    status: 412,
    meaning:
      'A precondition failed and nothing was changed: If-Match names another version of the resource (a plant, a webhook subscription) than its current one (or the resource is absent), or If-None-Match: * was sent and the id exists.',
    message: '%s',
  },
  BODY_TOO_LARGE: {
    code: 41301,
    status: 413,
    meaning: 'The request body is larger than the configured limit.',
    message: 'request body exceeds the limit of %s bytes',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    code: 41501,
    status: 415,
    meaning:
      "The request body's media type is not one the operation takes (JSON for most; a JSON Merge Patch or JSON for " +
      'PATCH; NDJSON or CSV for an import), is not UTF-8, or is sent with a Content-Encoding (compressed); the message ' +
      'names what the operation takes.',
    message: '%s',
  },
  PRECONDITION_REQUIRED: {
    code: 42801,
    status: 428,
    meaning:
      'This server requires If-Match on changes and deletes of plants (REQUIRE_PRECONDITIONS): read the plant, then send its ETag in If-Match.',
    message:
      '%s needs If-Match on this server: read the plant first and send its ETag (or If-Match: * to accept any version)',
  },
  RATE_LIMITED: {
    code: 42901,
    status: 429,
    meaning:
      'Too many requests for this token (or, without a valid token, this client address) in the current minute; retry after the Retry-After delay.',
    message: 'rate limit of %s requests per minute for %s exceeded; retry in %s s',
  },
  TOO_MANY_STREAMS: {
    code: 42902,
    status: 429,
    meaning:
      'This token has as many GET /events streams open as one token may (EVENTS_MAX_STREAMS_PER_TOKEN); close one first.',
    message: 'this token has %s event streams open, the most one token may hold; close one first',
  },
  TOO_MANY_BULK: {
    code: 42903,
    status: 429,
    meaning:
      'This token runs as many imports and exports on this instance as one token may (BULK_MAX_PER_TOKEN); retry when one has ended.',
    message: 'this token runs %s imports and exports, the most one token may run at once; retry when one has ended',
  },
  HEADERS_TOO_LARGE: {
    code: 43101,
    status: 431,
    meaning:
      'The request line and headers are larger than the configured limit (MAX_HEADER_SIZE); the connection is closed.',
    message: '%s',
  },
  INTERNAL: {
    code: 50001,
    status: 500,
    meaning:
      'An unexpected fault in the service. Nothing about it is disclosed; the request id in the X-Request-Id header finds it in the logs.',
    message: 'internal error; quote request id %s when reporting it',
  },
  STORE_UNAVAILABLE: {
    code: 50301,
    status: 503,
    meaning: 'The store cannot be reached or written to right now; retry after the Retry-After delay.',
    message: 'the store is unavailable right now; retry shortly',
  },
  READ_TIME_LIMIT: {
    code: 50302,
    status: 503,
    meaning:
      'The read (a search, a sorted page, a count) ran longer than one read may (READ_TIME_LIMIT_MS, SQLite store) and was stopped; narrow it (a longer search term, a tag) or retry after the Retry-After delay.',
    message:
      'the read ran longer than %s ms, the most one read may run, and was stopped: narrow it (a longer search term, a tag) or retry later',
  },
  CONSOLE_NOT_BUILT: {
    code: 50303,
    status: 503,
    meaning:
      'GET /console: this installation has no console build (dist/console/, written by npm run build). The API is not affected.',
    message: 'the console is not built in this installation: run npm run build',
  },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorName = keyof typeof Errors;

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The failures particular to a route, for its documentation; the OpenAPI
     * document adds those its shape implies (src/docs/openapi.ts).
     */
    failures?: readonly ErrorName[];
    /**
     * For a streamed body of lines (an import): the schema of one line, by media type. The OpenAPI document shows each
     * beside its media type as `x-itemSchema` (OpenAPI 3.2's `itemSchema`).
     */
    bodyItemSchemas?: Readonly<Record<string, object>>;
    /** For a streamed answer of messages (the change stream): the schema of one, by media type, shown likewise. */
    responseItemSchemas?: Readonly<Record<string, object>>;
  }
}

/** The seed's `Error` schema, shared (`{ $ref: 'Error' }`) and shown under components. */
export const ErrorSchema = {
  $id: 'Error',
  type: 'object',
  required: ['error', 'message'],
  properties: {
    error: {
      type: 'integer',
      format: 'int32',
      description: 'Numeric error value, from the error catalogue (see the API description): stable, never reused.',
      enum: Object.values(Errors).map((entry) => entry.code),
    },
    message: { type: 'string', description: 'Text describing the error: which field or header, and why.' },
  },
} as const;

/** The seed's `Error` record. */
export interface ErrorRecord {
  error: number;
  message: string;
}

/**
 * A failure meant for the client: its catalogue entry, a precise message and any
 * headers the status calls for (WWW-Authenticate, Allow, Retry-After).
 */
export class ApiError extends Error {
  readonly entry: CatalogueEntry;
  readonly headers: Readonly<Record<string, string>>;

  constructor(entry: CatalogueEntry, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'ApiError';
    this.entry = entry;
    this.headers = headers;
  }

  get statusCode(): number {
    return this.entry.status;
  }

  toRecord(): ErrorRecord {
    return { error: this.entry.code, message: this.message };
  }
}

/** The named failure, its message template filled in: each `%s` by the next value. */
export function failure(
  name: ErrorName,
  values: readonly (string | number | bigint)[] = [],
  headers: Record<string, string> = {},
): ApiError {
  const entry: CatalogueEntry = Errors[name];
  let next = 0;
  return new ApiError(
    entry,
    entry.message.replace(/%s/g, () => String(values[next++])),
    headers,
  );
}
