/**
 * A token creates only tokens within its own scopes and lifetime, and what it creates goes with it: on both stores,
 * over HTTP. The finding this answers: an admin-only token with `expiresIn: 4s` created a never-expiring token with
 * every scope, which went on writing plants after its creator had expired and after it was revoked.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import type { Store } from '../../src/store/types.js';
import { issueToken } from '../../src/tokens/token-service.js';
import { assertError } from '../support/assertions.js';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, json, postPlant, type Harness } from '../support/harness.js';
import { fromSource, runCli } from '../support/service-process.js';

interface TokenJson {
  id: string;
  name: string;
  scopes: string[];
  status: string;
  createdAt: string;
  expiresAt?: string;
  revokedAt?: string;
  createdBy?: string;
  secret: string;
}

for (const backend of testBackends())
  describe(`token lineage [${backend.name}]`, () => {
    let h: Harness;
    before(async () => {
      h = await createHarness({ backend });
    });
    after(async () => {
      await h.close();
    });

    const create = (body: unknown, token: string) =>
      h.request({
        method: 'POST',
        url: '/tokens',
        headers: { ...json, ...bearer(token) },
        payload: JSON.stringify(body),
      });
    const created = async (body: unknown, token: string): Promise<TokenJson> => {
      const response = await create(body, token);
      assert.equal(response.statusCode, 201, response.body);
      return response.json<TokenJson>();
    };
    const listed = async () =>
      (await h.request({ method: 'GET', url: '/tokens', headers: bearer(h.tokens.all) })).json<TokenJson[]>();
    const readPlants = (token: string) => h.request({ method: 'GET', url: '/plants', headers: bearer(token) });

    it('an admin-only token creates no token with a scope it lacks (403 naming them), and stores nothing', async () => {
      const refused = await create(
        { name: 'minted', scopes: ['plants:read', 'plants:write', 'admin'] },
        h.tokens.admin,
      );
      assertError(refused, Errors.TOKEN_BEYOND_CREATOR, 'cannot give plants:read, plants:write');
      // The default scopes are plant scopes too.
      assertError(await create({ name: 'minted' }, h.tokens.admin), Errors.TOKEN_BEYOND_CREATOR, 'plants:read');
      assert.ok(!(await listed()).some((t) => t.name === 'minted'), 'nothing was stored');
      const admin = await created({ name: 'minted', scopes: ['admin'] }, h.tokens.admin);
      assert.deepEqual(admin.scopes, ['admin']);
    });

    it('an expiring token creates only tokens that end no later than it does', async () => {
      const parent = await created({ name: 'hour', scopes: ['plants:read', 'admin'], expiresIn: '1h' }, h.tokens.all);
      assertError(
        await create({ name: 'forever-child', scopes: ['plants:read'] }, parent.secret),
        Errors.TOKEN_BEYOND_CREATOR,
        `expires at ${parent.expiresAt}`,
      );
      assertError(
        await create({ name: 'longer-child', scopes: ['plants:read'], expiresIn: '61m' }, parent.secret),
        Errors.TOKEN_BEYOND_CREATOR,
        'expiresIn would end after this token does',
      );
      const child = await created({ name: 'shorter-child', scopes: ['plants:read'], expiresIn: '59m' }, parent.secret);
      assert.ok(Date.parse(child.expiresAt ?? '') <= Date.parse(parent.expiresAt ?? ''));
      // A token that never expires may give any lifetime.
      await created({ name: 'decade', scopes: ['plants:read'], expiresIn: '3650d' }, h.tokens.all);
    });

    it('the finding: the child of a 3 s admin token expires with it, whatever it asked for', async () => {
      const parent = await created(
        { name: 'scraper-like', scopes: ['plants:read', 'plants:write', 'admin'], expiresIn: '3s' },
        h.tokens.all,
      );
      // Asking for the parent's own lifetime a moment later would outlive it: refused.
      assertError(
        await create({ name: 'outliver', scopes: ['plants:write'], expiresIn: '3s' }, parent.secret),
        Errors.TOKEN_BEYOND_CREATOR,
      );
      const child = await created({ name: 'short', scopes: ['plants:write'], expiresIn: '2s' }, parent.secret);
      assert.equal((await postPlant(h, '{"id":4700,"name":"Fern"}', child.secret)).statusCode, 200);
      // Wait for the parent's expiry, by outcome: its own requests are refused once it has passed.
      while ((await readPlants(parent.secret)).statusCode === 200) await new Promise((r) => setTimeout(r, 100));
      assertError(await readPlants(parent.secret), Errors.TOKEN_INVALID, 'expired');
      assertError(await postPlant(h, '{"id":4701,"name":"Fern"}', child.secret), Errors.TOKEN_INVALID, 'expired');
    });

    it('revoking a token revokes every token it created, directly or not, from their next request', async () => {
      const root = await created({ name: 'root', scopes: ['plants:read', 'admin'] }, h.tokens.all);
      const child = await created({ name: 'child', scopes: ['plants:read', 'admin'] }, root.secret);
      const grandchild = await created({ name: 'grandchild', scopes: ['plants:read'] }, child.secret);
      const sibling = await created({ name: 'sibling', scopes: ['plants:read'] }, h.tokens.all);
      // Each used once, so the authenticator has them cached: the revocation must still bite at once.
      for (const token of [root, child, grandchild, sibling])
        assert.equal((await readPlants(token.secret)).statusCode, 200);

      const revoked = await h.request({ method: 'DELETE', url: '/tokens/root', headers: bearer(h.tokens.all) });
      assert.equal(revoked.statusCode, 200, revoked.body);
      for (const token of [root, child, grandchild]) {
        assertError(await readPlants(token.secret), Errors.TOKEN_INVALID, 'revoked');
      }
      assert.equal((await readPlants(sibling.secret)).statusCode, 200, 'a token another created is untouched');

      const tokens = await listed();
      const shown = (name: string) => tokens.find((t) => t.name === name);
      assert.equal(shown('child')?.status, 'revoked');
      assert.equal(shown('grandchild')?.status, 'revoked');
      assert.equal(shown('child')?.createdBy, root.id);
      assert.equal(shown('grandchild')?.createdBy, child.id);
      assert.equal(shown('sibling')?.status, 'active');
      // Tokens made on the store directly (the harness's, like the CLI's and the first-start one) have no creator.
      assert.equal(shown('all')?.createdBy, undefined);
      assert.equal(shown('root')?.createdBy, (await current(h.tokens.all)).id);
    });

    const current = async (token: string) =>
      (await h.request({ method: 'GET', url: '/tokens/current', headers: bearer(token) })).json<TokenJson>();

    it('a token created while its creator is being revoked is not stored: 401, and its name stays free', async () => {
      const racing = await createHarness({
        backend,
        // The revocation lands between the creator's authentication and the insert.
        wrapStore: (store: Store) => {
          const tokens = Object.create(store.tokens) as Store['tokens'];
          tokens.insertToken = async (token) => {
            if (token.createdBy !== null) await store.tokens.revokeToken(token.createdBy, new Date());
            return store.tokens.insertToken(token);
          };
          return Object.assign(Object.create(store) as Store, { tokens });
        },
      });
      try {
        const secret = (await issueToken(racing.store.tokens, { name: 'racer', scopes: ['plants:read', 'admin'] }))
          .secret;
        const response = await racing.request({
          method: 'POST',
          url: '/tokens',
          headers: { ...json, ...bearer(secret) },
          payload: JSON.stringify({ name: 'late', scopes: ['plants:read'] }),
        });
        assertError(response, Errors.TOKEN_INVALID, 'revoked');
        const names = (await racing.store.tokens.listTokens()).map((t) => t.name);
        assert.ok(!names.includes('late'), 'nothing was stored');
      } finally {
        await racing.close();
      }
    });

    it('metrics:read reads GET /metrics and nothing else; admin reads it too; the plant scopes do not', async () => {
      const scraper = await created({ name: 'prometheus', scopes: ['metrics:read'] }, h.tokens.all);
      const metrics = await h.request({ method: 'GET', url: '/metrics', headers: bearer(scraper.secret) });
      assert.equal(metrics.statusCode, 200);
      assert.match(metrics.body, /plantstore_http_requests_total/);
      assert.equal(
        (await h.request({ method: 'GET', url: '/metrics', headers: bearer(h.tokens.admin) })).statusCode,
        200,
      );
      assertError(
        await h.request({ method: 'GET', url: '/metrics', headers: bearer(h.tokens.read) }),
        Errors.INSUFFICIENT_SCOPE,
        'metrics:read or admin',
      );
      for (const [method, url] of [
        ['GET', '/plants'],
        ['GET', '/plants/1'],
        ['GET', '/tokens'],
        ['GET', '/webhooks'],
        ['POST', '/events/tickets'],
      ] as const) {
        assertError(await h.request({ method, url, headers: bearer(scraper.secret) }), Errors.INSUFFICIENT_SCOPE);
      }
      assertError(await postPlant(h, '{"id":1,"name":"x"}', scraper.secret), Errors.INSUFFICIENT_SCOPE);
      assertError(
        await create({ name: 'scraper-child', scopes: ['metrics:read'] }, scraper.secret),
        Errors.INSUFFICIENT_SCOPE,
        'admin',
      );
      // An admin-only token cannot hand out metrics:read, which it does not list.
      assertError(
        await create({ name: 'scraper-2', scopes: ['metrics:read'] }, h.tokens.admin),
        Errors.TOKEN_BEYOND_CREATOR,
        'metrics:read',
      );
    });

    it('plantstore token revoke revokes what the token created, and says so', async () => {
      const parent = await created({ name: 'cli-parent', scopes: ['plants:read', 'admin'] }, h.tokens.all);
      const child = await created({ name: 'cli-child', scopes: ['plants:read'] }, parent.secret);
      const result = await runCli(['token', 'revoke', 'cli-parent'], { DATABASE_URL: h.databaseUrl }, fromSource());
      assert.equal(result.code, 0, result.stderr);
      assert.match(
        result.stdout,
        new RegExp(`revoked token ${parent.id} 'cli-parent' and 1 token it created.*${child.id}`),
      );
      const listing = await runCli(['token', 'list', '--json'], { DATABASE_URL: h.databaseUrl }, fromSource());
      const rows = JSON.parse(listing.stdout) as { name: string; status: string; createdBy: string | null }[];
      assert.deepEqual(
        rows.filter((t) => t.name.startsWith('cli-')).map((t) => [t.name, t.status, t.createdBy]),
        [
          ['cli-parent', 'revoked', (await current(h.tokens.all)).id],
          ['cli-child', 'revoked', parent.id],
        ],
      );
    });
  });
