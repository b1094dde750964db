import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { TokenLookupFaults } from '../support/token-lookup-faults.js';
import { generateTokenSecret } from '../../src/tokens/secret.js';
import { issueToken } from '../../src/tokens/token-service.js';
import { assertError } from '../support/assertions.js';
import { testBackends } from '../support/backends.js';
import { createHarness, json, type Harness } from '../support/harness.js';

const BODY = '{"id": 1, "name": "Monstera"}';
const CHALLENGE = 'Bearer realm="plantstore"';

for (const backend of testBackends())
  describe(`bearer authentication [${backend.name}]`, () => {
    let h: Harness;
    before(async () => {
      h = await createHarness({ backend, env: { TOKEN_CACHE_TTL_MS: '0' } });
    });
    after(() => h.close());

    const create = (authorization?: string, payload = BODY) =>
      h.request({
        method: 'POST',
        url: '/plants',
        headers: { ...json, ...(authorization === undefined ? {} : { authorization }) },
        payload,
      });

    it('no Authorization header -> 401 TOKEN_MISSING with a bare Bearer challenge', async () => {
      const response = await create();
      assertError(response, Errors.TOKEN_MISSING, 'Bearer');
      assert.equal(response.headers['www-authenticate'], CHALLENGE);
    });

    it('another scheme (Basic) -> 401 TOKEN_MISSING with a bare Bearer challenge', async () => {
      const response = await create('Basic dXNlcjpwYXNz');
      assertError(response, Errors.TOKEN_MISSING);
      assert.equal(response.headers['www-authenticate'], CHALLENGE);
    });

    const invalid: [string, () => Promise<string>, RegExp][] = [
      ['an empty bearer token', async () => 'Bearer ', /malformed/],
      ['a malformed token', async () => 'Bearer not-a-plantstore-token', /malformed/],
      ['a token with a bad character', async () => `Bearer ${generateTokenSecret().slice(0, -1)}!`, /malformed/],
      ['an unknown token', async () => `Bearer ${generateTokenSecret()}`, /not known/],
      [
        'a revoked token',
        async () => {
          const { secret } = await issueToken(h.store.tokens, { name: 'to-revoke', scopes: ['plants:write'] });
          await h.store.tokens.revokeToken('to-revoke', new Date());
          return `Bearer ${secret}`;
        },
        /revoked/,
      ],
      [
        'an expired token',
        async () => {
          const { secret } = await issueToken(
            h.store.tokens,
            { name: 'expired', scopes: ['plants:write'], expiresInMs: 1000 },
            new Date(Date.now() - 5000),
          );
          return `Bearer ${secret}`;
        },
        /expired/,
      ],
    ];
    for (const [label, header, reason] of invalid) {
      it(`${label} -> 401 TOKEN_INVALID with error="invalid_token"`, async () => {
        const response = await create(await header());
        const body = assertError(response, Errors.TOKEN_INVALID, reason);
        assert.equal(
          response.headers['www-authenticate'],
          `${CHALLENGE}, error="invalid_token", error_description="${body.message}"`,
        );
      });
    }

    it('the scheme name is case-insensitive (RFC 7235)', async () => {
      assert.equal((await create(`bearer ${h.tokens.write}`, '{"id": 2, "name": "a"}')).statusCode, 200);
    });

    it('a valid token without the scope -> 403 INSUFFICIENT_SCOPE naming the scope', async () => {
      for (const token of [h.tokens.read, h.tokens.admin]) {
        const response = await create(`Bearer ${token}`);
        assertError(response, Errors.INSUFFICIENT_SCOPE, 'plants:write');
        assert.equal(
          response.headers['www-authenticate'],
          `${CHALLENGE}, error="insufficient_scope", scope="plants:write"`,
        );
      }
    });

    it('authenticates before reading the body: no token and an oversized, malformed body still gets 401', async () => {
      const response = await create(undefined, '{'.repeat(h.config.bodyLimitBytes * 2));
      assertError(response, Errors.TOKEN_MISSING);
    });

    it('public operations need no token', async () => {
      for (const url of ['/healthz', '/readyz', '/openapi.json']) {
        assert.equal((await h.request({ method: 'GET', url })).statusCode, 200, url);
      }
    });

    it('records when a token was last used', async () => {
      const { secret, record } = await issueToken(h.store.tokens, { name: 'tracked', scopes: ['plants:read'] });
      assert.equal(record.lastUsedAt, null);
      await h.request({ method: 'GET', url: '/plants', headers: { authorization: `Bearer ${secret}` } });
      await new Promise((resolve) => setTimeout(resolve, 50));
      const stored = (await h.store.tokens.listTokens()).find((t) => t.name === 'tracked');
      assert.ok(stored?.lastUsedAt instanceof Date);
    });
  });

describe('token lookup cache', () => {
  it('revocation takes effect within TOKEN_CACHE_TTL_MS', async () => {
    const h = await createHarness({ env: { TOKEN_CACHE_TTL_MS: '300' } });
    try {
      const { secret } = await issueToken(h.store.tokens, { name: 'cached', scopes: ['plants:read'] });
      const list = () => h.request({ method: 'GET', url: '/plants', headers: { authorization: `Bearer ${secret}` } });
      assert.equal((await list()).statusCode, 200);
      await h.store.tokens.revokeToken('cached', new Date());
      await new Promise((resolve) => setTimeout(resolve, 350));
      assertError(await list(), Errors.TOKEN_INVALID, /revoked/);
    } finally {
      await h.close();
    }
  });

  it('a token lookup the store cannot answer -> 503 STORE_UNAVAILABLE, never a 5xx crash; the next lookup succeeds', async () => {
    const lookups = new TokenLookupFaults();
    const h = await createHarness({ env: { TOKEN_CACHE_TTL_MS: '0' }, wrapStore: lookups.wrapStore });
    try {
      const list = () =>
        h.request({ method: 'GET', url: '/plants', headers: { authorization: `Bearer ${h.tokens.read}` } });
      lookups.failing = true;
      assertError(await list(), Errors.STORE_UNAVAILABLE, /unavailable/);
      lookups.failing = false;
      assert.equal((await list()).statusCode, 200);
    } finally {
      await h.close();
    }
  });
});
