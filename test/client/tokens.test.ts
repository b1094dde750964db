/** The client's token methods against a real listening server: create, list, revoke; refusals as PlantStoreError. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPlantStoreClient, PlantStoreError, type PlantStoreClient } from '../../packages/client/src/index.js';
import { Errors } from '../../src/http/errors.js';
import { createHarness, type Harness } from '../support/harness.js';
import { listen } from './servers.js';

describe('client token methods', () => {
  let h: Harness;
  let baseUrl: string;
  let admin: PlantStoreClient;

  before(async () => {
    h = await createHarness();
    baseUrl = await listen(h);
    // Every scope: a token creates only tokens within its own scopes.
    admin = createPlantStoreClient({ baseUrl, token: h.tokens.all });
  });
  after(() => h.close());

  it('creates a token whose secret works, lists it without the secret, and revokes it', async () => {
    const created = await admin.createToken({ name: 'from-client', scopes: ['plants:read'] });
    assert.match(created.secret, /^pst_/);
    const reader = createPlantStoreClient({ baseUrl, token: created.secret });
    assert.deepEqual((await reader.listPlants()).plants, []);

    const listed = (await admin.listTokens()).find((t) => t.id === created.id);
    assert.equal(listed?.name, 'from-client');
    assert.equal(Object.hasOwn(listed ?? {}, 'secret'), false);

    assert.equal((await admin.revokeToken('from-client')).status, 'revoked');
    await assert.rejects(reader.listPlants(), (error: unknown) => {
      assert.ok(error instanceof PlantStoreError);
      assert.equal(error.error, Errors.TOKEN_INVALID.code);
      return true;
    });
  });

  it('throws the Error record of a refusal', async () => {
    await assert.rejects(admin.createToken({ name: 'reader' }), (error: unknown) => {
      assert.ok(error instanceof PlantStoreError);
      assert.equal(error.status, 409);
      assert.equal(error.error, Errors.TOKEN_NAME_TAKEN.code);
      return true;
    });
    await assert.rejects(admin.revokeToken('nobody'), { name: 'PlantStoreError', status: 404 });
  });
});
