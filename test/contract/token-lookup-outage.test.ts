/**
 * A secured operation looks its token up in the store, so a store outage answers 503 on every one of them, not
 * only on those that read plants: the document lists it for each (the harness's check fails an undocumented one).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { bearer, createHarness, type Harness } from '../support/harness.js';
import { TokenLookupFaults } from '../support/token-lookup-faults.js';

describe('a token lookup the store cannot answer', () => {
  let h: Harness;
  const lookups = new TokenLookupFaults();
  before(async () => {
    h = await createHarness({ env: { TOKEN_CACHE_TTL_MS: '0' }, wrapStore: lookups.wrapStore });
  });
  after(() => h.close());

  const secured = [
    { method: 'GET', url: '/tokens/current' },
    { method: 'POST', url: '/events/tickets' },
    { method: 'GET', url: '/metrics' },
    { method: 'GET', url: '/webhooks/event-types' },
  ] as const;

  for (const { method, url } of secured) {
    it(`answers ${method} ${url} with a documented 503`, async () => {
      lookups.failing = true;
      try {
        const response = await h.request({ method, url, headers: bearer(h.tokens.all) });
        assert.equal(response.statusCode, 503, response.body);
        assert.equal((JSON.parse(response.body) as { error: number }).error, Errors.STORE_UNAVAILABLE.code);
      } finally {
        lookups.failing = false;
      }
    });
  }
});
