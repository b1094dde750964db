/**
 * The store's own failures, for every layer above it to recognise. The HTTP layer
 * maps them to its error catalogue (src/http/errors.ts); the store never needs to
 * know what they become there.
 */

/** The database cannot serve requests right now: an outage, expected to pass (a 503 with Retry-After). */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}
