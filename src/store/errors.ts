/** The store's own failures; the HTTP layer maps them to its catalogue, so the store never knows what they become. */

/** The database cannot serve requests right now: an outage, expected to pass (a 503 with Retry-After). */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/** The store's schema is newer than this build: it was migrated by a later Plant Store. */
export class StoreTooNewError extends Error {
  constructor(where: string, storeVersion: number, knownVersion: number) {
    super(
      `the store ${where} was migrated by a newer Plant Store (schema version ${storeVersion}; this build knows up to ${knownVersion}): ` +
        'upgrade Plant Store, or restore a backup made before the upgrade',
    );
    this.name = 'StoreTooNewError';
  }
}

/** Refuses a store whose recorded migrations go beyond the ones this build has. */
export function refuseNewerStore(
  where: string,
  applied: Iterable<number>,
  known: readonly { readonly version: number }[],
): void {
  const newest = Math.max(0, ...applied);
  const knownNewest = Math.max(0, ...known.map((migration) => migration.version));
  if (newest > knownNewest) throw new StoreTooNewError(where, newest, knownNewest);
}

/** A read ran longer than the store lets one run (READ_TIME_LIMIT_MS) and was stopped: a 503 of its own. */
export class ReadTimeLimitError extends Error {
  constructor(readonly limitMs: number) {
    super(`the read ran longer than ${limitMs} ms, the most one read may run, and was stopped`);
    this.name = 'ReadTimeLimitError';
  }
}
