/**
 * Graceful shutdown under real load: SIGTERM while 32 clients are creating
 * plants, with some requests provably in flight (head and half the body sent).
 * Those complete with 200, every answer is a 200 or an Error record, the process
 * exits 0, and every acknowledged create is in the store afterwards.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { issueToken } from '../../src/tokens/token-service.js';
import { testBackends } from '../support/backends.js';
import { startServiceProcess } from '../support/service-process.js';
import { RawConnection } from '../hostile/raw-http.js';
import { auditStore, snapshotStore } from './audit.js';
import { bodyOf, newLedger, plantFor, startCreateLoad } from './create-load.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const backend of testBackends()) describe(`SIGTERM under create load [${backend.name}]`, () => {
  it('completes in-flight requests, answers only 200s or Error records, exits 0 and keeps every 200', async () => {
    const opened = await backend.open();
    const { secret } = await issueToken(opened.store.tokens, { name: 'writer', scopes: ['plants:read', 'plants:write'] });
    try {
      const service = await startServiceProcess({ DATABASE_URL: opened.databaseUrl, SHUTDOWN_TIMEOUT_MS: '20000' });
      const ledger = newLedger();
      const load = startCreateLoad({ url: service.url, token: secret, ledger, concurrency: 32, firstId: 1n });
      await sleep(400);

      // Requests the server has begun to read: head and half the body are sent.
      const slow = await Promise.all(Array.from({ length: 5 }, async (_, i) => {
        const plant = plantFor(1_000_000n + BigInt(i));
        ledger.attempted.set(plant.id, plant);
        const body = Buffer.from(bodyOf(plant));
        const connection = await RawConnection.open(service.url);
        await connection.write(
          `POST /plants HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${secret}\r\n` +
            `content-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`,
        );
        await connection.write(body.subarray(0, 10));
        return { plant, body, connection };
      }));
      await sleep(100);

      const exit = service.stop('SIGTERM');
      await sleep(300);
      for (const { body, connection } of slow) await connection.write(body.subarray(10));
      for (const { plant, connection } of slow) {
        const response = await connection.response(10_000);
        assert.equal(response.status, 200, `in-flight create ${plant.id}: ${response.body}`);
        ledger.acknowledged.set(plant.id, plant);
        connection.destroy();
      }
      assert.equal(await exit, 0, service.output().slice(-2000));
      load.stop();
      await load.done;

      assert.deepEqual(ledger.violations, []);
      assert.ok(ledger.acknowledged.size > 50, `the load ran (${ledger.acknowledged.size} creates acknowledged)`);
      assert.deepEqual(auditStore(await snapshotStore(opened.databaseUrl), ledger), []);
    } finally {
      await opened.cleanup();
    }
  });
});
