/**
 * /tokens over HTTP, on both stores: create (secret once), list (never secrets), revoke (refused from the next
 * request), the CLI's rules (name, scopes, duration), and admin scope only.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { assertError } from '../support/assertions.js';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, json, type Harness } from '../support/harness.js';

interface TokenJson {
  id: string;
  name: string;
  scopes: string[];
  status: string;
  createdAt: string;
  expiresAt?: string;
  revokedAt?: string;
  lastUsedAt?: string;
  secret?: string;
}

for (const backend of testBackends())
  describe(`/tokens [${backend.name}]`, () => {
    let h: Harness;
    before(async () => {
      h = await createHarness({ backend });
    });
    after(async () => {
      await h.close();
    });

    // Every scope: a token creates only tokens within its own scopes (test/tokens/lineage.test.ts).
    const create = (body: unknown, token = h.tokens.all) =>
      h.request({
        method: 'POST',
        url: '/tokens',
        headers: { ...json, ...bearer(token) },
        payload: JSON.stringify(body),
      });
    const list = async () =>
      (await h.request({ method: 'GET', url: '/tokens', headers: bearer(h.tokens.admin) })).json<TokenJson[]>();

    it('creates a token whose secret, shown once, works at once with exactly its scopes', async () => {
      const response = await create({ name: 'reporting', scopes: ['plants:read'], expiresIn: '30d' });
      assert.equal(response.statusCode, 201, response.body);
      const created = response.json<TokenJson>();
      assert.match(created.secret ?? '', /^pst_[A-Za-z0-9_-]{43}$/);
      assert.match(created.id, /^tok_/);
      assert.deepEqual(created.scopes, ['plants:read']);
      assert.equal(created.status, 'active');
      const lifetime = Date.parse(created.expiresAt ?? '') - Date.parse(created.createdAt);
      assert.equal(lifetime, 30 * 86_400_000);

      const read = await h.request({ method: 'GET', url: '/plants', headers: bearer(created.secret ?? '') });
      assert.equal(read.statusCode, 200);
      const write = await h.request({
        method: 'POST',
        url: '/plants',
        headers: { ...json, ...bearer(created.secret ?? '') },
        payload: '{"id":1,"name":"Fern"}',
      });
      assertError(write, Errors.INSUFFICIENT_SCOPE, 'plants:write');

      const { secret: _secret, ...shown } = created;
      const { lastUsedAt: _used, ...listed } = (await list()).find((t) => t.name === 'reporting') ?? {};
      assert.deepEqual(listed, shown);
      assert.ok(!JSON.stringify(await list()).includes('pst_'), 'the list never carries a secret');
    });

    it('defaults to plants:read and plants:write, never expiring, like the CLI', async () => {
      const created = (await create({ name: 'app.v2' })).json<TokenJson>();
      assert.deepEqual(created.scopes, ['plants:read', 'plants:write']);
      assert.equal(created.expiresAt, undefined);
    });

    it('refuses what the CLI refuses, naming the field', async () => {
      assertError(
        await create({ name: 'tok_sneaky' }),
        Errors.INVALID_FIELD,
        "name must contain only letters (A-Z, a-z), digits, '.', '_' or '-', starting with a letter or digit, and not starting with 'tok_'",
      );
      assertError(await create({ name: '-dash' }), Errors.INVALID_FIELD, 'name must contain only');
      assertError(await create({ name: 'x', scopes: ['root'] }), Errors.INVALID_FIELD, 'scopes.0 must be one of');
      assertError(await create({ name: 'x', scopes: [] }), Errors.INVALID_FIELD, 'scopes must');
      assertError(await create({ name: 'x', expiresIn: 'forever' }), Errors.INVALID_FIELD, 'expiresIn');
      assertError(
        await create({ name: 'x', expiresIn: '0d' }),
        Errors.INVALID_FIELD,
        'expiresIn must be a count and a unit',
      );
      assertError(await create({}), Errors.INVALID_FIELD, 'name');
      assertError(await create({ name: 'reader' }), Errors.TOKEN_NAME_TAKEN, "'reader'");
    });

    it('revokes by id or by name; the token is refused from its next request and stays listed as revoked', async () => {
      const created = (await create({ name: 'short-lived', scopes: ['plants:read'] })).json<TokenJson>();
      const secret = created.secret ?? '';
      // Used once, so the authenticator caches it: the revocation must still win at once.
      assert.equal((await h.request({ method: 'GET', url: '/plants', headers: bearer(secret) })).statusCode, 200);

      const revoked = await h.request({
        method: 'DELETE',
        url: `/tokens/${created.id}`,
        headers: bearer(h.tokens.admin),
      });
      assert.equal(revoked.statusCode, 200, revoked.body);
      assert.equal(revoked.json<TokenJson>().status, 'revoked');
      assertError(
        await h.request({ method: 'GET', url: '/plants', headers: bearer(secret) }),
        Errors.TOKEN_INVALID,
        'revoked',
      );
      const again = await h.request({ method: 'DELETE', url: '/tokens/short-lived', headers: bearer(h.tokens.admin) });
      assert.equal(again.statusCode, 200);
      assert.equal(again.json<TokenJson>().revokedAt, revoked.json<TokenJson>().revokedAt);
      assert.equal((await list()).find((t) => t.id === created.id)?.status, 'revoked');

      assertError(
        await h.request({ method: 'DELETE', url: '/tokens/nobody', headers: bearer(h.tokens.admin) }),
        Errors.TOKEN_NOT_FOUND,
        'nobody',
      );
    });

    it('GET /tokens/current shows any valid token itself, and nothing without one', async () => {
      const current = await h.request({ method: 'GET', url: '/tokens/current', headers: bearer(h.tokens.read) });
      assert.equal(current.statusCode, 200, current.body);
      assert.deepEqual(
        { name: current.json<TokenJson>().name, scopes: current.json<TokenJson>().scopes },
        { name: 'reader', scopes: ['plants:read'] },
      );
      assertError(await h.request({ method: 'GET', url: '/tokens/current' }), Errors.TOKEN_MISSING);
      assertError(
        await h.request({ method: 'GET', url: '/tokens/current', headers: bearer(`pst_${'x'.repeat(43)}`) }),
        Errors.TOKEN_INVALID,
        'not known',
      );
    });

    it('needs the admin scope for every operation', async () => {
      assertError(await create({ name: 'y' }, h.tokens.write), Errors.INSUFFICIENT_SCOPE, 'admin');
      for (const [method, url] of [
        ['GET', '/tokens'],
        ['DELETE', '/tokens/reader'],
      ] as const) {
        assertError(
          await h.request({ method, url, headers: bearer(h.tokens.read) }),
          Errors.INSUFFICIENT_SCOPE,
          'admin',
        );
        assertError(await h.request({ method, url }), Errors.TOKEN_MISSING);
      }
      assert.equal((await list()).find((t) => t.name === 'reader')?.status, 'active');
    });
  });
