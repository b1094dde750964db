/**
 * Which PostgreSQL failures mean "the store cannot serve this right now" (503 with
 * Retry-After) rather than "bug" (500). Anything connection-level, a server that is
 * shutting down, starting up or read-only (a failover in progress), a timeout, or
 * a server out of resources: the same request is expected to succeed later.
 */
import { StoreUnavailableError } from '../errors.js';

// SQLSTATE classes and codes (https://www.postgresql.org/docs/current/errcodes-appendix.html).
const UNAVAILABLE_SQLSTATE_CLASSES = new Set([
  '08', // connection exception
  '53', // insufficient resources: too many connections, disk full, out of memory
  '58', // system error: I/O error outside PostgreSQL
]);
const UNAVAILABLE_SQLSTATES = new Set([
  '57014', // query_canceled: our statement_timeout fired
  '57P01', // admin_shutdown: the server is shutting down (or this backend was terminated)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: the server is starting up or in recovery
  '57P04', // database_dropped
  '55P03', // lock_not_available: a lock_timeout fired
  '25006', // read_only_sql_transaction: writes reached a standby, e.g. mid-failover
  '40001', // serialization_failure: retryable by definition
  '40P01', // deadlock_detected: retryable by definition
]);

// Socket-level errors from Node's net/dns modules.
const UNAVAILABLE_NODE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

// The pg driver and its pool report these as plain Errors without a code.
const UNAVAILABLE_DRIVER_MESSAGES = [
  'Connection terminated', // covers "...unexpectedly" and "...due to connection timeout"
  'timeout exceeded when trying to connect', // no pooled connection came free in time
  'Query read timeout', // our client-side backstop for a server that went silent
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'Cannot use a pool after calling end on the pool',
  'timeout expired',
];

function describeIfUnavailable(error: unknown, depth = 0): string | undefined {
  if (depth > 5 || error === null || typeof error !== 'object') return undefined;
  const { code, message, cause, errors } = error as {
    code?: unknown;
    message?: unknown;
    cause?: unknown;
    errors?: unknown;
  };
  if (typeof code === 'string') {
    if (UNAVAILABLE_SQLSTATES.has(code) || (code.length === 5 && UNAVAILABLE_SQLSTATE_CLASSES.has(code.slice(0, 2)))) {
      return `SQLSTATE ${code}: ${String(message)}`;
    }
    if (UNAVAILABLE_NODE_CODES.has(code)) return String(message ?? code);
  }
  if (typeof message === 'string' && UNAVAILABLE_DRIVER_MESSAGES.some((m) => message.startsWith(m))) return message;
  // Connecting to a name with several addresses fails with an AggregateError.
  if (Array.isArray(errors)) {
    for (const inner of errors) {
      const found = describeIfUnavailable(inner, depth + 1);
      if (found !== undefined) return found;
    }
  }
  return describeIfUnavailable(cause, depth + 1);
}

/** The error to throw for `error`: a StoreUnavailableError when it means an outage, else itself. */
export function translatePostgresError(error: unknown): unknown {
  if (error instanceof StoreUnavailableError) return error;
  const reason = describeIfUnavailable(error);
  return reason === undefined
    ? error
    : new StoreUnavailableError(`PostgreSQL store unavailable (${reason})`, { cause: error });
}

/** Runs a store call, translating outage-level failures into StoreUnavailableError. */
export async function guarded<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw translatePostgresError(error);
  }
}

/**
 * Whether a statement lost a deadlock (40P01) or a serialization conflict (40001), or
 * gave up waiting for a row another transaction holds (55P03, a lock_timeout):
 * PostgreSQL rolled it back whole, and the same writes sent again, each in a
 * statement of its own, cannot be part of such a cycle, and only the write of the
 * held row waits for it.
 */
export function isWriteConflict(error: unknown): boolean {
  const code = (error instanceof StoreUnavailableError ? error.cause : error) as { code?: unknown } | undefined;
  return code?.code === '40P01' || code?.code === '40001' || code?.code === '55P03';
}
