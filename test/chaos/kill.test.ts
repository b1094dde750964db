/**
 * Crash safety: under concurrent create load, the service is killed with SIGKILL
 * at a random moment, restarted, and loaded again, cycle after cycle. Afterwards
 * the database (read directly, not through the service) holds every create that
 * was answered 200, exactly as sent, and nothing a client did not send; SQLite's
 * integrity check is clean. Creates whose answer was lost to the kill are retried
 * after the restart and must then succeed (a same-content create is a safe retry).
 *
 * CHAOS_CYCLES (default 2 here; `npm run test:chaos` runs 10) and
 * CHAOS_CONCURRENCY (default 16) scale the run.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { issueToken } from '../../src/tokens/token-service.js';
import { testBackends } from '../support/backends.js';
import { startServiceProcess } from '../support/service-process.js';
import { auditStore, snapshotStore } from './audit.js';
import { newLedger, sendCreate, startCreateLoad } from './create-load.js';
import { WAIT_BOUND_MS, waitFor } from '../support/wait.js';

const CYCLES = Number(process.env.CHAOS_CYCLES ?? 2);
const CONCURRENCY = Number(process.env.CHAOS_CONCURRENCY ?? 16);
/**
 * The kill comes at a random moment in this range after the load's first acknowledged
 * create (on a busy machine the first may take seconds).
 */
const KILL_AFTER_MS = { min: 0, max: 1350 };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const backend of testBackends())
  describe(`kill -9 under create load [${backend.name}]`, () => {
    const timeout = 120_000 + CYCLES * 60_000;
    it(`loses no acknowledged create over ${CYCLES} kill/restart cycles`, { timeout }, async (t) => {
      const opened = await backend.open();
      const { secret } = await issueToken(opened.store.tokens, {
        name: 'writer',
        scopes: ['plants:read', 'plants:write'],
      });
      const ledger = newLedger();
      try {
        for (let cycle = 0; cycle < CYCLES; cycle++) {
          const service = await startServiceProcess({ DATABASE_URL: opened.databaseUrl });
          // Creates whose answer the last kill swallowed: committed or not, a retry must now succeed.
          const retried = [...ledger.unknown.values()];
          for (const plant of retried) {
            const answered = await sendCreate(service.url, secret, plant, ledger, WAIT_BOUND_MS);
            assert.ok(answered, `retry of ${plant.id} got no answer`);
            assert.ok(
              ledger.acknowledged.has(plant.id),
              `retry of ${plant.id} was not a 200: ${JSON.stringify([...ledger.statuses])}`,
            );
          }
          const before = ledger.acknowledged.size;
          const load = startCreateLoad({
            url: service.url,
            token: secret,
            ledger,
            concurrency: CONCURRENCY,
            firstId: BigInt(cycle) * 10_000_000n + 1n,
          });
          const killAfter = KILL_AFTER_MS.min + Math.floor(Math.random() * (KILL_AFTER_MS.max - KILL_AFTER_MS.min));
          await waitFor(`cycle ${cycle + 1}: a create acknowledged`, () => ledger.acknowledged.size > before);
          await sleep(killAfter);
          assert.equal(await service.stop('SIGKILL'), 'SIGKILL');
          load.stop();
          await load.done;
          t.diagnostic(
            `cycle ${cycle + 1}: killed ${killAfter} ms after the first acknowledged create; ` +
              `${ledger.acknowledged.size - before} creates acknowledged, ` +
              `${retried.length} retried, ${ledger.unknown.size} unanswered`,
          );
          assert.ok(ledger.acknowledged.size > before, `cycle ${cycle + 1}: the load ran`);
        }
        assert.deepEqual(ledger.violations, []);
        const snapshot = await snapshotStore(opened.databaseUrl);
        assert.deepEqual(auditStore(snapshot, ledger), []);
        t.diagnostic(
          `${snapshot.rows.length} rows; ${ledger.acknowledged.size} acknowledged; integrity: ${snapshot.integrity}`,
        );
      } finally {
        await opened.cleanup();
      }
    });
  });
