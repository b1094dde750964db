/**
 * The error catalogue: every `Error.error` value the service can emit, declared once.
 *
 * Codes are stable and never reused. A code is the HTTP status times 100 plus a
 * sequence number, so a reader can tell the status from the code at a glance.
 * Call sites refer to entries by name (`Errors.PLANT_CONFLICT`), never by number;
 * the OpenAPI document lists this table verbatim.
 */
export interface CatalogueEntry {
  readonly code: number;
  readonly status: number;
  readonly meaning: string;
}

export const Errors = {
  BAD_REQUEST: { code: 40000, status: 400, meaning: 'The request is malformed (bad URL, bad header or another protocol-level problem).' },
  INVALID_JSON: { code: 40001, status: 400, meaning: 'The request body is not valid JSON, or not valid UTF-8.' },
  BODY_REQUIRED: { code: 40002, status: 400, meaning: 'The operation needs a JSON body and the request had none.' },
  BODY_NOT_OBJECT: { code: 40003, status: 400, meaning: 'The request body is valid JSON but not a JSON object.' },
  INVALID_FIELD: { code: 40004, status: 400, meaning: 'A field of the request body is missing or invalid; the message names each one and why.' },
  INVALID_PARAMETER: { code: 40005, status: 400, meaning: 'A path or query parameter is invalid; the message names it and why.' },
  INVALID_WEBHOOK_URL: { code: 40006, status: 400, meaning: 'The webhook URL is refused: not http(s), malformed, or its host resolves to a private, loopback or reserved address; the message says which.' },
  TOKEN_MISSING: { code: 40101, status: 401, meaning: 'No bearer token was sent (Authorization: Bearer <token>).' },
  TOKEN_INVALID: { code: 40102, status: 401, meaning: 'The bearer token is malformed, unknown, revoked or expired.' },
  INSUFFICIENT_SCOPE: { code: 40301, status: 403, meaning: 'The token is valid but lacks the scope this operation needs.' },
  ROUTE_NOT_FOUND: { code: 40401, status: 404, meaning: 'No operation exists at this path.' },
  PLANT_NOT_FOUND: { code: 40402, status: 404, meaning: 'No plant has this id.' },
  WEBHOOK_NOT_FOUND: { code: 40403, status: 404, meaning: 'No webhook subscription has this id.' },
  WEBHOOK_DELIVERY_NOT_FOUND: { code: 40404, status: 404, meaning: 'The webhook subscription has no delivery with this id.' },
  METHOD_NOT_ALLOWED: { code: 40501, status: 405, meaning: 'The path exists but not with this method; the Allow header lists the methods it has.' },
  REQUEST_TIMEOUT: { code: 40801, status: 408, meaning: 'The client took too long to send the request headers or body (HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS); the connection is closed.' },
  PLANT_CONFLICT: { code: 40901, status: 409, meaning: 'A plant with this id already exists with a different name or tag.' },
  BODY_TOO_LARGE: { code: 41301, status: 413, meaning: 'The request body is larger than the configured limit.' },
  UNSUPPORTED_MEDIA_TYPE: { code: 41501, status: 415, meaning: 'The request body is not application/json (UTF-8), or is sent with a Content-Encoding (compressed); send it as plain UTF-8 JSON.' },
  RATE_LIMITED: { code: 42901, status: 429, meaning: 'Too many requests for this token (or, without a valid token, this client address) in the current minute; retry after the Retry-After delay.' },
  HEADERS_TOO_LARGE: { code: 43101, status: 431, meaning: 'The request line and headers are larger than the configured limit (MAX_HEADER_SIZE); the connection is closed.' },
  INTERNAL: { code: 50001, status: 500, meaning: 'An unexpected fault in the service. Nothing about it is disclosed; the request id in the X-Request-Id header finds it in the logs.' },
  STORE_UNAVAILABLE: { code: 50301, status: 503, meaning: 'The store cannot be reached or written to right now; retry after the Retry-After delay.' },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorName = keyof typeof Errors;

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

/** Thrown by stores when the database cannot serve requests right now: mapped to STORE_UNAVAILABLE (503). */
export { StoreUnavailableError } from '../store/errors.js';
