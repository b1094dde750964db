/**
 * Storage faults under a running service (SQLite): the disk fills up, or the file
 * system turns read-only as on a disk error. The service answers 503 with an
 * Error record (and Retry-After), keeps serving reads, does not crash, corrupts
 * nothing, and is back to normal once space returns (or, for the read-only disk,
 * once an operator has repaired it and restarted the service).
 *
 * These need root and mount(2) (a size-limited tmpfs, a loop-mounted ext4 image);
 * where the environment forbids them each test is skipped with one loud line.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { issueToken } from '../../src/tokens/token-service.js';
import { isCataloguedError } from '../support/assertions.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { auditStore, snapshotStore } from './audit.js';
import { newLedger, plantFor, sendCreate, type LoadLedger } from './create-load.js';
import { fillDisk, freeDisk, mountExt4Image, mountTmpfs } from './filesystems.js';
import { WAIT_BOUND_MS } from '../support/wait.js';
import { checkedFetch } from '../support/checked-fetch.js';

function skipLoudly(t: TestContext, reason: string): void {
  process.stderr.write(`\n!!! storage-fault test skipped: ${reason}\n\n`);
  t.skip(reason);
}

async function prepareDatabase(dir: string): Promise<{ databaseUrl: string; token: string }> {
  const path = join(dir, 'plantstore.db');
  const store = SqliteStore.open({ path });
  const { secret } = await issueToken(store.tokens, { name: 'writer', scopes: ['plants:read', 'plants:write'] });
  await store.close();
  return { databaseUrl: `sqlite:${path}`, token: secret };
}

/** Creates plants one at a time from `next` until `until` says stop; returns the ids sent. */
async function createUntil(
  service: ServiceProcess,
  token: string,
  ledger: LoadLedger,
  next: { id: bigint },
  until: () => boolean,
  max: number,
): Promise<void> {
  for (let i = 0; i < max && !until(); i++) {
    // Unanswered within a wait far above any create's on a busy machine: the service stopped answering.
    assert.ok(
      await sendCreate(service.url, token, plantFor(next.id++), ledger, WAIT_BOUND_MS),
      'the service stopped answering',
    );
  }
}

async function expectAlive(service: ServiceProcess, token: string, readableId: string): Promise<void> {
  assert.equal(service.child.exitCode, null, `the service exited:\n${service.output().slice(-2000)}`);
  assert.equal((await checkedFetch(`${service.url}/healthz`)).status, 200);
  const read = await checkedFetch(`${service.url}/plants/${readableId}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(read.status, 200, 'reads still work');
}

function assert503Only(ledger: LoadLedger): void {
  assert.deepEqual(ledger.violations, []);
  const statuses = [...ledger.statuses.keys()];
  assert.ok(
    statuses.every((s) => s === '200' || s === '503'),
    `statuses: ${JSON.stringify([...ledger.statuses])}`,
  );
}

describe('storage faults [sqlite]', () => {
  it(
    'disk full: 503 with an Error record, reads go on, and creates succeed again once space returns',
    { timeout: 300_000 },
    async (t) => {
      const fs = mountTmpfs(4 * 1024 * 1024);
      if ('skip' in fs) return skipLoudly(t, fs.skip);
      try {
        const { databaseUrl, token } = await prepareDatabase(fs.dir);
        const service = await startServiceProcess({ DATABASE_URL: databaseUrl });
        const ledger = newLedger();
        const next = { id: 1n };
        await createUntil(service, token, ledger, next, () => false, 20);
        assert.equal(ledger.acknowledged.size, 20);

        const filler = fillDisk(fs.dir);
        const unavailable = () => (ledger.statuses.get('503') ?? 0) > 0;
        await createUntil(service, token, ledger, next, unavailable, 20_000);
        assert.ok(unavailable(), 'the full disk was never noticed');
        // The 503 is an Error record with Retry-After.
        const refused = await checkedFetch(`${service.url}/plants`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ id: 999_999_999, name: 'no room' }),
        });
        ledger.attempted.set('999999999', { id: '999999999', name: 'no room' });
        if (refused.status === 503) {
          assert.ok(isCataloguedError(await refused.json()));
          assert.match(refused.headers.get('retry-after') ?? '', /^\d+$/);
        } else {
          assert.equal(refused.status, 200);
          ledger.acknowledged.set('999999999', { id: '999999999', name: 'no room' });
        }
        await createUntil(service, token, ledger, next, () => false, 20);
        await expectAlive(service, token, '1');
        assert503Only(ledger);
        t.diagnostic(`disk full: ${JSON.stringify(Object.fromEntries(ledger.statuses))}`);
        // Readiness says what the creates say: this instance cannot store anything now.
        const notReady = await checkedFetch(`${service.url}/readyz`);
        assert.equal(notReady.status, 503, `readyz with a full disk: ${await notReady.text()}`);

        freeDisk(filler);
        const before = ledger.acknowledged.size;
        await createUntil(service, token, ledger, next, () => ledger.acknowledged.size >= before + 20, 1000);
        assert.ok(
          ledger.acknowledged.size >= before + 20,
          `creates did not recover: ${JSON.stringify([...ledger.statuses])}`,
        );
        assert503Only(ledger);
        assert.equal((await checkedFetch(`${service.url}/readyz`)).status, 200, 'ready again once space returned');

        assert.equal(await service.stop('SIGTERM'), 0, service.output().slice(-2000));
        assert.deepEqual(auditStore(await snapshotStore(databaseUrl), ledger), []);
      } finally {
        fs.unmount();
      }
    },
  );

  it(
    'file system turns read-only: 503 with an Error record and no crash; after repair and restart, nothing acknowledged is lost',
    { timeout: 300_000 },
    async (t) => {
      const fs = mountExt4Image(16);
      if ('skip' in fs) return skipLoudly(t, fs.skip);
      try {
        const { databaseUrl, token } = await prepareDatabase(fs.dir);
        const service = await startServiceProcess({ DATABASE_URL: databaseUrl });
        const ledger = newLedger();
        const next = { id: 1n };
        await createUntil(service, token, ledger, next, () => false, 20);
        assert.equal(ledger.acknowledged.size, 20);

        fs.failToReadOnly();
        assert.ok(fs.isReadOnly, 'the file system did not turn read-only');
        await createUntil(service, token, ledger, next, () => false, 30);
        assert.equal(
          ledger.statuses.get('503'),
          30,
          `every create is refused: ${JSON.stringify([...ledger.statuses])}`,
        );
        await expectAlive(service, token, '1');
        assert.equal((await checkedFetch(`${service.url}/readyz`)).status, 503, 'readyz on a read-only file system');
        assert503Only(ledger);

        // Shutting down cannot checkpoint a read-only file; it must still end.
        const code = await service.stop('SIGTERM');
        t.diagnostic(`exit code on a read-only file system: ${code}`);
        fs.repair();
        const restarted = await startServiceProcess({ DATABASE_URL: databaseUrl });
        await createUntil(restarted, token, ledger, next, () => false, 20);
        assert.equal(
          ledger.acknowledged.size,
          40,
          `creates work after repair: ${JSON.stringify([...ledger.statuses])}`,
        );
        assert.equal(await restarted.stop('SIGTERM'), 0);
        assert.deepEqual(auditStore(await snapshotStore(databaseUrl), ledger), []);
      } finally {
        fs.unmount();
      }
    },
  );
});
