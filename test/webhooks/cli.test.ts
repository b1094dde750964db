/** `plantstore webhook add|list|remove`, run as a real command against each store. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { testBackends } from '../support/backends.js';
import { runCli } from '../support/service-process.js';

for (const backend of testBackends())
  describe(`plantstore webhook [${backend.name}]`, () => {
    it('adds, lists and removes subscriptions; private URLs need WEBHOOK_ALLOW_PRIVATE_URLS', async () => {
      const opened = await backend.open();
      const env = { DATABASE_URL: opened.databaseUrl };
      try {
        const refused = await runCli(['webhook', 'add', 'http://127.0.0.1:9000/hook'], env);
        assert.equal(refused.code, 2);
        assert.match(
          refused.stderr,
          /127\.0\.0\.1, a private, loopback or reserved address; set WEBHOOK_ALLOW_PRIVATE_URLS=true/,
        );
        assert.equal(
          (await runCli(['webhook', 'add', 'https://93.184.216.34/', '--description', 'a\tb'], env)).code,
          2,
        );

        const added = await runCli(
          ['webhook', 'add', 'http://127.0.0.1:9000/hook', '--description', 'local receiver'],
          { ...env, WEBHOOK_ALLOW_PRIVATE_URLS: 'true' },
        );
        assert.equal(added.code, 0, added.stderr);
        const id = /created webhook subscription (whk_[0-9a-f]{24})/.exec(added.stderr)?.[1];
        assert.ok(id, added.stderr);
        assert.match(added.stdout, /^whsec_[A-Za-z0-9+/]{43}=\n$/, 'the secret alone on stdout');

        const table = await runCli(['webhook', 'list'], env);
        assert.equal(table.code, 0);
        assert.match(table.stdout, new RegExp(`${id}\\s+http://127\\.0\\.0\\.1:9000/hook\\s+local receiver`));
        assert.ok(!table.stdout.includes('whsec_'), 'never the secret');
        const listed = JSON.parse((await runCli(['webhook', 'list', '--json'], env)).stdout) as {
          id: string;
          url: string;
        }[];
        assert.deepEqual(
          listed.map((s) => [s.id, s.url]),
          [[id, 'http://127.0.0.1:9000/hook']],
        );
        assert.deepEqual(await opened.store.webhooks.getSubscription(id).then((s) => s?.description), 'local receiver');

        const removed = await runCli(['webhook', 'remove', id], env);
        assert.equal(removed.code, 0);
        assert.equal(removed.stdout, `removed webhook subscription ${id}\n`);
        const again = await runCli(['webhook', 'remove', id], env);
        assert.equal(again.code, 2);
        assert.match(again.stderr, /no webhook subscription has id/);
        assert.equal((await runCli(['webhook', 'list'], env)).stdout, '(none)\n');
      } finally {
        await opened.cleanup();
      }
    });
  });
