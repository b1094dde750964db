/** `plantstore webhook rotate-secret`, run as a real command against each store. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClaimedDelivery } from '../../src/store/types.js';
import { testBackends } from '../support/backends.js';
import { runCli } from '../support/service-process.js';

const SECRET_LINE = /^whsec_[A-Za-z0-9+/]{43}=\n$/;

for (const backend of testBackends())
  describe(`plantstore webhook rotate-secret [${backend.name}]`, () => {
    it('prints the new secret alone on stdout, keeps the old one for the overlap, and never lists either', async () => {
      const opened = await backend.open();
      const env = { DATABASE_URL: opened.databaseUrl };
      let plantId = 0;
      /** What a dispatcher claiming now would sign with (a plant makes a delivery to claim). */
      const signingSecrets = async (): Promise<[string, string | undefined]> => {
        await opened.store.plants.createPlant({ id: BigInt((plantId += 1)), name: 'rotation' });
        const claimed = await opened.store.webhooks.claimDueDeliveries({
          now: new Date(),
          limit: 1,
          leaseMs: 60_000,
          owner: `cli-test:${plantId}`,
        });
        const delivery = claimed[0] as ClaimedDelivery;
        await opened.store.webhooks.recordAttempt({
          deliveryId: delivery.deliveryId,
          leaseOwner: delivery.leaseOwner,
          attempt: { attempt: 1, attemptedAt: new Date(), latencyMs: 1 },
          outcome: { kind: 'succeeded' },
        });
        return [delivery.secret, delivery.previousSecret];
      };
      try {
        const added = await runCli(['webhook', 'add', 'https://93.184.216.34/hook'], env);
        assert.equal(added.code, 0, added.stderr);
        const id = /created webhook subscription (whk_[0-9a-f]{24})/.exec(added.stderr)?.[1] as string;
        const original = added.stdout.trim();

        const rotated = await runCli(['webhook', 'rotate-secret', id], env);
        assert.equal(rotated.code, 0, rotated.stderr);
        assert.match(rotated.stdout, SECRET_LINE, 'the secret alone on stdout');
        const fresh = rotated.stdout.trim();
        assert.notEqual(fresh, original);
        const until = /signed with the previous secret too until (\S+)\.\n/.exec(rotated.stderr)?.[1];
        assert.ok(Math.abs(Date.parse(until ?? '') - Date.now() - 86_400_000) < 60_000, rotated.stderr);
        assert.deepEqual(await signingSecrets(), [fresh, original]);

        const hour = await runCli(['webhook', 'rotate-secret', id, '--overlap', '3600'], env);
        assert.equal(hour.code, 0, hour.stderr);
        const hourUntil = /too until (\S+)\.\n/.exec(hour.stderr)?.[1];
        assert.ok(Math.abs(Date.parse(hourUntil ?? '') - Date.now() - 3_600_000) < 60_000, hour.stderr);
        assert.deepEqual(
          await signingSecrets(),
          [hour.stdout.trim(), fresh],
          'rotating again replaces the previous secret',
        );

        const immediate = await runCli(['webhook', 'rotate-secret', id, '--overlap', '0'], env);
        assert.equal(immediate.code, 0, immediate.stderr);
        assert.match(immediate.stdout, SECRET_LINE);
        assert.match(immediate.stderr, /the previous secret stopped at once/);
        assert.deepEqual(await signingSecrets(), [immediate.stdout.trim(), undefined]);

        const listed =
          (await runCli(['webhook', 'list'], env)).stdout + (await runCli(['webhook', 'list', '--json'], env)).stdout;
        assert.ok(listed.includes(id));
        assert.ok(!listed.includes('whsec_'), 'never a secret');

        for (const bad of ['abc', '604801', '1.5', '1e3', '']) {
          const refused = await runCli(['webhook', 'rotate-secret', id, '--overlap', bad], env);
          assert.equal(refused.code, 2, `--overlap '${bad}': ${refused.stderr}`);
          assert.match(refused.stderr, /overlap must be a whole number of seconds from 0 to 604800/);
          assert.equal(refused.stdout, '');
        }
        const unknown = await runCli(['webhook', 'rotate-secret', 'whk_nobody'], env);
        assert.equal(unknown.code, 2);
        assert.match(unknown.stderr, /no webhook subscription has id 'whk_nobody'/);
        assert.deepEqual(
          await signingSecrets(),
          [immediate.stdout.trim(), undefined],
          'refused rotations changed nothing',
        );
      } finally {
        await opened.cleanup();
      }
    });
  });
