import { StoreUnavailableError } from '../errors.js';

// SQLite result codes that mean "the store cannot serve this now", not "bad request"
// or "bug": a locked, full, read-only or failing disk, or a damaged file. They become 503s.
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|FULL|READONLY|IOERR|CANTOPEN|NOMEM|PROTOCOL|CORRUPT|NOTADB)/;
const CORRUPT = /^SQLITE_(CORRUPT|NOTADB)/;

export function isCorruption(code: string | undefined): boolean {
  return code !== undefined && CORRUPT.test(code);
}

/**
 * What better-sqlite3 throws for a statement on a closed connection: a TypeError
 * with no code, so its message is all there is to tell it by (test/store/contract.test.ts
 * pins it). The store is closed, so it is unavailable, as on PostgreSQL.
 */
const CLOSED = 'The database connection is not open';

/** A storage-level failure becomes StoreUnavailableError; anything else stays as it is. */
export function translateError(error: unknown): unknown {
  if (error instanceof TypeError && error.message === CLOSED)
    return new StoreUnavailableError('the SQLite store is closed', { cause: error });
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !UNAVAILABLE.test(code)) return error;
  const message = isCorruption(code)
    ? `the SQLite store is corrupt (${code}): stop the service and restore the file from a backup`
    : `SQLite store unavailable (${code})`;
  return new StoreUnavailableError(message, { cause: error });
}

/** SQLite's result code of a failure, whether raw or translated (then its cause's). */
export function sqliteCode(error: unknown): string | undefined {
  const failure = error instanceof StoreUnavailableError ? error.cause : error;
  const code = failure instanceof Error && 'code' in failure ? failure.code : undefined;
  return typeof code === 'string' ? code : undefined;
}

/** Runs a store call, translating storage-level failures into StoreUnavailableError. */
export function guarded<T>(operation: () => T): T {
  try {
    return operation();
  } catch (error) {
    throw translateError(error);
  }
}
