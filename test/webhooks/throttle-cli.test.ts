/** `plantstore webhook add --max-per-second`, `webhook throttle` and the list's MAX/S column, on each store. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { testBackends } from '../support/backends.js';
import { runCli } from '../support/service-process.js';

for (const backend of testBackends())
  describe(`plantstore webhook throttle [${backend.name}]`, () => {
    it('sets, shows, changes and removes a subscription rate; refuses one out of range', async () => {
      const opened = await backend.open();
      const env = { DATABASE_URL: opened.databaseUrl, WEBHOOK_ALLOW_PRIVATE_URLS: 'true' };
      try {
        for (const bad of ['0', '10001', '1.5', '1e3', 'fast']) {
          const refused = await runCli(['webhook', 'add', 'http://127.0.0.1:9000/hook', '--max-per-second', bad], env);
          assert.equal(refused.code, 2, bad);
          assert.match(refused.stderr, /max-per-second must be a whole number from 1 to 10000/);
        }
        assert.deepEqual(await opened.store.webhooks.listSubscriptions(), [], 'nothing added by a refused command');

        const added = await runCli(['webhook', 'add', 'http://127.0.0.1:9000/hook', '--max-per-second', '25'], env);
        assert.equal(added.code, 0, added.stderr);
        const id = /created webhook subscription (whk_[0-9a-f]{24})/.exec(added.stderr)?.[1];
        assert.ok(id);
        assert.equal((await opened.store.webhooks.getSubscription(id))?.maxPerSecond, 25);
        const table = await runCli(['webhook', 'list'], env);
        assert.match(table.stdout, /MAX\/S/);
        assert.match(table.stdout, new RegExp(`${id}.*\\byes\\s+25\\s`));
        const listed = JSON.parse((await runCli(['webhook', 'list', '--json'], env)).stdout) as {
          maxPerSecond?: number;
        }[];
        assert.equal(listed[0]?.maxPerSecond, 25);

        const changed = await runCli(['webhook', 'throttle', id, '5'], env);
        assert.equal(changed.code, 0, changed.stderr);
        assert.equal(changed.stdout, `webhook subscription ${id}: at most 5 per second\n`);
        assert.equal((await opened.store.webhooks.getSubscription(id))?.maxPerSecond, 5);
        assert.equal((await runCli(['webhook', 'throttle', id, '0'], env)).code, 2);
        const lifted = await runCli(['webhook', 'throttle', id, 'none'], env);
        assert.equal(lifted.stdout, `webhook subscription ${id}: no limit\n`);
        const subscription = await opened.store.webhooks.getSubscription(id);
        assert.equal(subscription?.maxPerSecond, undefined);
        assert.equal(subscription?.version, 3);
        const unknown = await runCli(['webhook', 'throttle', 'whk_000000000000000000000000', '5'], env);
        assert.equal(unknown.code, 2);
        assert.match(unknown.stderr, /no webhook subscription has id/);
      } finally {
        await opened.cleanup();
      }
    });
  });
