/** A store whose token lookups fail with "database is locked" while `failing` is set: the auth path's outage. */
import { StoreUnavailableError } from '../../src/store/errors.js';
import type { Store } from '../../src/store/types.js';

export class TokenLookupFaults {
  failing = false;

  /** For createHarness's `wrapStore`: the store, its token lookups failing while `failing` is set. */
  readonly wrapStore = (store: Store): Store => {
    const tokens = Object.create(store.tokens) as typeof store.tokens;
    tokens.findTokenBySecretHash = (hash) =>
      this.failing
        ? Promise.reject(new StoreUnavailableError('database is locked'))
        : store.tokens.findTokenBySecretHash(hash);
    return Object.assign(Object.create(store) as typeof store, { tokens });
  };
}
