/** `plantstore webhook ...`, run as a real command against each store. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { testBackends } from '../support/backends.js';
import { runCli } from '../support/service-process.js';
import { execSql } from './database.js';

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

    it('a tag filter: add --tag, list shows it, update --tag and --no-tag change it', async () => {
      const opened = await backend.open();
      const env = { DATABASE_URL: opened.databaseUrl, WEBHOOK_ALLOW_PRIVATE_URLS: 'true' };
      try {
        const bad = await runCli(['webhook', 'add', 'http://127.0.0.1:9/h', '--tag', 'a\tb'], env);
        assert.equal(bad.code, 2);
        assert.match(bad.stderr, /tag must be 1 to 100 characters without control characters/);
        const added = await runCli(['webhook', 'add', 'http://127.0.0.1:9/h', '--tag', 'fern'], env);
        assert.equal(added.code, 0, added.stderr);
        const id = /created webhook subscription (whk_[0-9a-f]{24})/.exec(added.stderr)?.[1] ?? '';
        assert.equal((await opened.store.webhooks.getSubscription(id))?.tag, 'fern');
        assert.match(
          (await runCli(['webhook', 'list'], env)).stdout,
          new RegExp(`${id}.*plant\\.created\\s+fern\\s+yes`),
        );

        assert.equal((await runCli(['webhook', 'update', id, '--tag', 'moss'], env)).code, 0);
        assert.equal((await opened.store.webhooks.getSubscription(id))?.tag, 'moss');
        const listed = JSON.parse((await runCli(['webhook', 'list', '--json'], env)).stdout) as { tag?: string }[];
        assert.equal(listed[0]?.tag, 'moss');
        const removed = await runCli(['webhook', 'update', id, '--no-tag'], env);
        assert.equal(removed.stdout, `updated webhook subscription ${id}\n`);
        assert.equal((await opened.store.webhooks.getSubscription(id))?.tag, undefined);
        const nothing = await runCli(['webhook', 'update', id], env);
        assert.equal(nothing.code, 2);
        assert.match(nothing.stderr, /give --tag <tag> or --no-tag/);
        const unknown = await runCli(['webhook', 'update', 'whk_000000000000000000000000', '--tag', 'x'], env);
        assert.equal(unknown.code, 2);
        assert.match(unknown.stderr, /no webhook subscription has id/);
      } finally {
        await opened.store.close();
        await opened.cleanup();
      }
    });

    it('event types, disable and enable, the delivery log, retry and recover', async () => {
      const opened = await backend.open();
      const env = { DATABASE_URL: opened.databaseUrl, WEBHOOK_ALLOW_PRIVATE_URLS: 'true' };
      try {
        const bad = await runCli(['webhook', 'add', 'http://127.0.0.1:9/h', '--event-types', 'plant.eaten'], env);
        assert.equal(bad.code, 2);
        assert.match(bad.stderr, /--event-types takes a comma-separated list of plant.created, plant.updated/);
        const added = await runCli(
          ['webhook', 'add', 'http://127.0.0.1:9/h', '--event-types', 'plant.deleted,plant.created'],
          env,
        );
        assert.equal(added.code, 0, added.stderr);
        const id = /created webhook subscription (whk_[0-9a-f]{24})/.exec(added.stderr)?.[1] ?? '';
        assert.deepEqual((await opened.store.webhooks.getSubscription(id))?.eventTypes, [
          'plant.created',
          'plant.deleted',
        ]);

        const disabled = await runCli(['webhook', 'disable', id, '--reason', 'receiver moving'], env);
        assert.equal(disabled.code, 0, disabled.stderr);
        const table = (await runCli(['webhook', 'list'], env)).stdout;
        assert.match(table, /EVENT TYPES\s+TAG\s+ENABLED/);
        assert.match(table, new RegExp(`${id}.*plant\\.created,plant\\.deleted\\s+-\\s+no: receiver moving`));
        assert.equal((await runCli(['webhook', 'enable', id], env)).code, 0);
        assert.equal((await opened.store.webhooks.getSubscription(id))?.enabled, true);

        await opened.store.plants.createPlant({ id: 5n, name: 'Logged' });
        const [delivery] = await opened.store.webhooks.listDeliveries(id, { limit: 1 });
        assert.ok(delivery);
        const log = await runCli(['webhook', 'deliveries', id], env);
        assert.equal(log.code, 0, log.stderr);
        assert.match(
          log.stdout,
          new RegExp(`${delivery.id}\\s+${delivery.eventId}\\s+plant\\.created\\s+pending\\s+0`),
        );
        const ofPlant = await runCli(['webhook', 'deliveries', id, '--plant', '5', '--json'], env);
        assert.equal(ofPlant.code, 0, ofPlant.stderr);
        assert.deepEqual(
          (JSON.parse(ofPlant.stdout) as { id: string }[]).map((d) => d.id),
          [delivery.id],
        );
        assert.match(ofPlant.stdout, /"plant": {\s+"id": 5,/, 'the plant id, as an exact JSON number');
        assert.equal(
          (await runCli(['webhook', 'deliveries', id, '--plant', '6'], env)).stdout.includes(delivery.id),
          false,
        );
        const badPlant = await runCli(['webhook', 'deliveries', id, '--plant', 'five'], env);
        assert.equal(badPlant.code, 2);
        assert.match(badPlant.stderr, /--plant must be a plant id/);

        // A failed delivery: retried by hand, then recovered with the rest of its window.
        await execSql(opened.databaseUrl, {
          sqlite: "UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL",
          postgres: "UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL",
        });
        const retried = await runCli(['webhook', 'retry', id, delivery.id], env);
        assert.equal(retried.code, 0, retried.stderr);
        assert.equal((await opened.store.webhooks.getDelivery(id, delivery.id))?.status, 'pending');
        await execSql(opened.databaseUrl, {
          sqlite: "UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL",
          postgres: "UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL",
        });
        const since = new Date(Date.now() - 3_600_000).toISOString();
        const recovered = await runCli(['webhook', 'recover', id, '--since', since], env);
        assert.equal(recovered.code, 0, recovered.stderr);
        assert.match(recovered.stdout, /^recovery rcv_[0-9a-f]{24}: done, 1 failed deliveries made pending\n$/);
        assert.equal((await opened.store.webhooks.getDelivery(id, delivery.id))?.status, 'pending');
        const refused = await runCli(['webhook', 'recover', id, '--since', 'last week'], env);
        assert.equal(refused.code, 2);
        assert.match(refused.stderr, /since must be an RFC 3339 date-time/);
      } finally {
        await opened.cleanup();
      }
    });
  });
