import { StoreUnavailableError } from '../../http/errors.js';

// SQLite result codes that mean "the store cannot serve this now", not "bad request"
// or "bug": a locked, full, read-only or failing disk. They become 503s.
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|FULL|READONLY|IOERR|CANTOPEN|NOMEM|PROTOCOL)/;

/** Runs a store call, translating storage-level failures into StoreUnavailableError. */
export function guarded<T>(operation: () => T): T {
  try {
    return operation();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && UNAVAILABLE.test(code)) {
      throw new StoreUnavailableError(`SQLite store unavailable (${code})`, { cause: error });
    }
    throw error;
  }
}
