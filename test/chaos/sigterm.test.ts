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
import { WAIT_BOUND_MS, waitFor } from '../support/wait.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const backend of testBackends())
  describe(`SIGTERM under create load [${backend.name}]`, () => {
    it('completes in-flight requests, answers only 200s or Error records, exits 0 and keeps every 200', async () => {
      const opened = await backend.open();
      const { secret } = await issueToken(opened.store.tokens, {
        name: 'writer',
        scopes: ['plants:read', 'plants:write'],
      });
      try {
        const service = await startServiceProcess({ DATABASE_URL: opened.databaseUrl, SHUTDOWN_TIMEOUT_MS: '20000' });
        const ledger = newLedger();
        const load = startCreateLoad({ url: service.url, token: secret, ledger, concurrency: 32, firstId: 1n });
        await waitFor('more than 50 creates acknowledged', () => ledger.acknowledged.size > 50);

        // Requests the server has begun to read: head and half the body are sent, behind a pipelined GET /healthz in
        // the same write. Node parses both heads from that one chunk, so the GET's answer proves the POST was seen.
        const slow = await Promise.all(
          Array.from({ length: 5 }, async (_, i) => {
            const plant = plantFor(1_000_000n + BigInt(i));
            ledger.attempted.set(plant.id, plant);
            const body = Buffer.from(bodyOf(plant));
            const connection = await RawConnection.open(service.url);
            await connection.write(
              Buffer.concat([
                Buffer.from(
                  'GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n' +
                    `POST /plants HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${secret}\r\n` +
                    `content-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`,
                ),
                body.subarray(0, 10),
              ]),
            );
            assert.equal((await connection.response(WAIT_BOUND_MS)).status, 200, 'the pipelined GET /healthz');
            return { plant, body, connection };
          }),
        );

        const exit = service.stop('SIGTERM');
        await sleep(300);
        for (const { body, connection } of slow) await connection.write(body.subarray(10));
        for (const { plant, connection } of slow) {
          const response = await connection.response(WAIT_BOUND_MS);
          assert.equal(response.status, 200, `in-flight create ${plant.id}: ${response.body}`);
          ledger.acknowledged.set(plant.id, plant);
          connection.destroy();
        }
        assert.equal(await exit, 0, service.output().slice(-2000));
        load.stop();
        await load.done;

        assert.deepEqual(ledger.violations, []);
        assert.deepEqual(auditStore(await snapshotStore(opened.databaseUrl), ledger), []);
      } finally {
        await opened.cleanup();
      }
    });
  });
