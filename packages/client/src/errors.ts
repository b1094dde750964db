/** What the client throws: the service's Error record with status and request id, or no answer at all. */

export class PlantStoreError extends Error {
  /** HTTP status, e.g. 404. */
  readonly status: number;
  /** The Error record's code (e.g. 40402); 0 when the answer was not one, e.g. a proxy's 502 page. */
  readonly error: number;
  /** The service's X-Request-Id for this request, to find it in the logs. */
  readonly requestId: string | undefined;
  /** Seconds the service asked to wait before retrying (503, 429), when it said. */
  readonly retryAfterSeconds: number | undefined;

  constructor(status: number, error: number, message: string, response?: Response) {
    super(message);
    this.name = 'PlantStoreError';
    this.status = status;
    this.error = error;
    this.requestId = response?.headers.get('x-request-id') ?? undefined;
    const retryAfter = Number(response?.headers.get('retry-after') ?? Number.NaN);
    this.retryAfterSeconds = Number.isFinite(retryAfter) ? retryAfter : undefined;
  }
}

/** The service could not be reached (refused, reset, DNS, timeout...). */
export class PlantStoreConnectionError extends Error {
  constructor(
    readonly baseUrl: string,
    cause: unknown,
  ) {
    super(`cannot reach ${baseUrl}: ${describeCause(cause)}`, { cause });
    this.name = 'PlantStoreConnectionError';
  }
}

function describeCause(cause: unknown): string {
  // undici reports "fetch failed" and puts the useful part (ECONNREFUSED...) in cause.
  const inner = cause instanceof Error && cause.cause instanceof Error ? cause.cause : cause;
  if (inner instanceof Error) {
    const code = (inner as NodeJS.ErrnoException).code;
    return code !== undefined && !inner.message.includes(code) ? `${code} ${inner.message}` : inner.message;
  }
  return String(inner);
}

function isErrorRecord(body: unknown): body is { error: number; message: string } {
  if (body === null || typeof body !== 'object') return false;
  const record = body as Record<string, unknown>;
  return typeof record.error === 'number' && typeof record.message === 'string';
}

/** The error to throw for a failed response, from its body as openapi-fetch read it. */
export function errorFromResponse(response: Response, body: unknown): PlantStoreError {
  if (isErrorRecord(body)) return new PlantStoreError(response.status, body.error, body.message, response);
  const text = typeof body === 'string' ? body.trim().slice(0, 200) : '';
  const message = `HTTP ${response.status} ${response.statusText}${text === '' ? '' : `: ${text}`}`;
  return new PlantStoreError(response.status, 0, message, response);
}
