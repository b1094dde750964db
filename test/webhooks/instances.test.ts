/**
 * Scale-out: two `plantstore serve` processes on one PostgreSQL database share the
 * outbox (claims with FOR UPDATE SKIP LOCKED and a lease), so each event is sent
 * once per attempt, never by both.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { issueToken } from '../../src/tokens/token-service.js';
import { postgresAvailable, postgresBackend, type OpenedTestStore } from '../support/backends.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { startReceiver, verifySignature, type Receiver } from './receiver.js';
import { checkedFetch } from '../support/checked-fetch.js';

const PLANTS = 60;

describe('webhooks with two service instances on PostgreSQL', { skip: !postgresAvailable() }, () => {
  let opened: OpenedTestStore;
  let receiver: Receiver;
  let instances: ServiceProcess[] = [];
  let token: string;
  const seen = new Set<string>();

  before(async () => {
    opened = await postgresBackend.open();
    token = (await issueToken(opened.store.tokens, { name: 'operator', scopes: ['plants:write', 'admin'] })).secret;
    // Each event's first attempt is refused, its second acknowledged: retries are shared work too.
    receiver = await startReceiver((_index, request) => {
      const id = String(request.headers['webhook-id']);
      if (seen.has(id)) return 200;
      seen.add(id);
      return 503;
    });
    // A short poll, so both instances are constantly competing for the same rows.
    const env = {
      DATABASE_URL: opened.databaseUrl,
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '20',
      WEBHOOK_RETRY_SCHEDULE: '1s',
      WEBHOOK_CONCURRENCY: '4',
    };
    instances = await Promise.all([startServiceProcess(env), startServiceProcess(env)]);
  });
  after(async () => {
    await Promise.all(instances.map((instance) => instance.stop()));
    await receiver?.close();
    await opened?.cleanup();
  });

  it('delivers each event once per attempt, whichever instance created it', async () => {
    const [a, b] = instances as [ServiceProcess, ServiceProcess];
    const subscribed = await checkedFetch(`${a.url}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url }),
    });
    assert.equal(subscribed.status, 201);
    const { secret } = (await subscribed.json()) as { secret: string };

    const statuses = await Promise.all(
      Array.from({ length: PLANTS }, async (_, i) => {
        const response = await checkedFetch(`${(i % 2 === 0 ? a : b).url}/plants`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: `{"id": ${9223372036854775000n + BigInt(i)}, "name": "p${i}"}`,
        });
        await response.arrayBuffer();
        return response.status;
      }),
    );
    assert.ok(
      statuses.every((s) => s === 200),
      statuses.join(','),
    );

    await receiver.waitFor((r) => r.filter((x) => x.answered === 200).length >= PLANTS, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 1500)); // past a retry delay: nothing more may come
    const byId = new Map<string, number[]>();
    for (const request of receiver.received) {
      const id = String(request.headers['webhook-id']);
      byId.set(id, [...(byId.get(id) ?? []), request.answered as number]);
    }
    assert.equal(byId.size, PLANTS, 'one webhook-id per plant');
    for (const [id, answers] of byId) assert.deepEqual(answers, [503, 200], `${id} was sent once per attempt`);
    const bodies = receiver.received.filter((r) => r.answered === 200).map((r) => verifySignature(secret, r));
    assert.deepEqual(
      bodies.sort(),
      Array.from({ length: PLANTS }, (_, i) => `{"id":${9223372036854775000n + BigInt(i)},"name":"p${i}"}`).sort(),
    );
  });
});
