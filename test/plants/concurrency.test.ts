import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testBackends } from '../support/backends.js';
import { createHarness, type Harness } from '../support/harness.js';
import { unversioned } from '../support/assertions.js';
import { listed } from '../support/pages.js';

for (const backend of testBackends())
  describe(`concurrent creates of one id over real sockets [${backend.name}]`, () => {
    let h: Harness;
    let url: string;
    before(async () => {
      h = await createHarness({ backend });
      url = await h.app.listen({ port: 0, host: '127.0.0.1' });
    });
    after(() => h.close());

    const create = (id: string, name: string) =>
      fetch(`${url}/plants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${h.tokens.all}`, 'content-type': 'application/json' },
        body: `{"id": ${id}, "name": "${name}"}`,
      }).then(async (r) => ({ status: r.status, body: await r.text() }));

    it('50 parallel creates with different names: exactly one 200, 49 409s, one row', async () => {
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => create('9007199254740993', `racer ${i}`)));
      const statuses = results.map((r) => r.status);
      assert.equal(statuses.filter((s) => s === 200).length, 1, JSON.stringify(statuses));
      assert.equal(statuses.filter((s) => s === 409).length, 49);
      const winner = JSON.parse(results.find((r) => r.status === 200)?.body ?? '{}') as { name: string };
      const rows = await listed(h.store, { limit: 10 });
      assert.deepEqual(rows, [{ id: 9007199254740993n, name: winner.name }]);
    });

    it('50 parallel identical creates: all 200 with the same body, one row', async () => {
      const results = await Promise.all(Array.from({ length: 50 }, () => create('-5', 'same')));
      assert.ok(
        results.every((r) => r.status === 200 && r.body === '{"name":"same"}'),
        JSON.stringify(results.slice(0, 3)),
      );
      assert.deepEqual(unversioned(await h.store.plants.getPlant(-5n)), { id: -5n, name: 'same' });
      assert.equal((await listed(h.store, { limit: 10 })).length, 2);
    });
  });
