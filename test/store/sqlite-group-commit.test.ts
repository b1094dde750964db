/**
 * Group commit on SQLite: plant writes that arrive together are committed in one
 * transaction by the writer thread, with exactly the outcomes they would have one
 * by one, and every acknowledged write on disk.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { StoreUnavailableError } from '../../src/store/errors.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { CreatePlantOutcome, PlantRecord } from '../../src/store/types.js';
import { tempDir } from '../support/temp.js';
import { unversioned } from '../support/assertions.js';

interface Row {
  id: bigint;
  name: string;
  tag: string | null;
}

/** The rows as a fresh connection sees them: what is in the file, not in any cache. */
function rowsOnDisk(path: string): Row[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare('SELECT id, name, tag FROM plants ORDER BY id').safeIntegers(true).all() as Row[];
  } finally {
    db.close();
  }
}

describe('SQLite group commit', () => {
  let dir: string;
  let path: string;
  let store: SqliteStore;
  before(() => {
    dir = tempDir();
    path = join(dir, 'plantstore.db');
    store = SqliteStore.open({ path });
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('commits many concurrent creates in few batches, each acknowledged one on disk', async () => {
    const before = store.groupCommitStats();
    const plants: PlantRecord[] = Array.from({ length: 2000 }, (_, i) =>
      i % 2 === 0
        ? { id: 2n ** 62n + BigInt(i), name: `plant ${i}` }
        : { id: BigInt(-i), name: `plant ${i}`, tag: `tag ${i % 7}` },
    );
    const outcomes = await Promise.all(plants.map((plant) => store.plants.createPlant(plant)));
    assert.deepEqual(
      unversioned(outcomes),
      plants.map((plant) => ({ kind: 'created', plant })),
    );
    const stats = store.groupCommitStats();
    assert.equal(stats.operations - before.operations, 2000);
    assert.ok(
      stats.batches - before.batches <= 2000 / 100,
      `2000 writes took ${stats.batches - before.batches} batches`,
    );
    const expected = plants
      .map((p) => ({ id: p.id, name: p.name, tag: p.tag ?? null }))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    assert.deepEqual(rowsOnDisk(path), expected);
  });

  it('gives creates of one id in one batch exactly the outcomes they would have one by one', async () => {
    const id = 9007199254740993n; // 2^53 + 1
    const stranger = { id: 5n, name: 'bystander' };
    const before = store.groupCommitStats();
    // Issued in one tick, so they share one batch, in this order.
    const pending: Promise<CreatePlantOutcome>[] = [
      store.plants.createPlant({ id, name: 'Monstera', tag: 'houseplant' }),
      store.plants.createPlant({ id, name: 'Monstera', tag: 'houseplant' }),
      store.plants.createPlant({ id, name: 'Monstera' }),
      store.plants.createPlant(stranger),
      store.plants.createPlant({ id, name: 'Fern', tag: 'houseplant' }),
      store.plants.createPlant({ id, name: 'Monstera', tag: 'houseplant' }),
    ];
    const outcomes = await Promise.all(pending);
    assert.deepEqual(store.groupCommitStats().batches - before.batches, 1, 'all six in one batch');
    const first = { id, name: 'Monstera', tag: 'houseplant' };
    assert.deepEqual(unversioned(outcomes), [
      { kind: 'created', plant: first },
      { kind: 'replayed', plant: first },
      { kind: 'conflict', existing: first },
      { kind: 'created', plant: stranger },
      { kind: 'conflict', existing: first },
      { kind: 'replayed', plant: first },
    ]);
    const rows = rowsOnDisk(path).filter((row) => row.id === id || row.id === 5n);
    assert.deepEqual(rows, [
      { id: 5n, name: 'bystander', tag: null },
      { id, name: 'Monstera', tag: 'houseplant' },
    ]);
  });

  it('applies a create, a delete and a re-create of one id in one batch in order', async () => {
    const id = -9223372036854775808n;
    const outcomes = await Promise.all([
      store.plants.createPlant({ id, name: 'first' }),
      store.plants.deletePlant(id),
      store.plants.deletePlant(id),
      store.plants.createPlant({ id, name: 'second', tag: 't' }),
    ]);
    assert.deepEqual(unversioned(outcomes), [
      { kind: 'created', plant: { id, name: 'first' } },
      { kind: 'deleted' },
      { kind: 'not-found' },
      { kind: 'created', plant: { id, name: 'second', tag: 't' } },
    ]);
    assert.deepEqual(unversioned(await store.plants.getPlant(id)), { id, name: 'second', tag: 't' });
  });

  it('reads on the main connection see every write as soon as it is acknowledged', async () => {
    for (let i = 0; i < 50; i++) {
      const id = 10_000n + BigInt(i);
      await store.plants.createPlant({ id, name: `seen ${i}` });
      assert.deepEqual(unversioned(await store.plants.getPlant(id)), { id, name: `seen ${i}` });
    }
  });

  it('runs token writes in the writer thread, in order with plant writes', async () => {
    const token = {
      id: 'tok_0123456789abcdef',
      name: 'gc',
      secretHash: 'a'.repeat(64),
      scopes: ['plants:read' as const],
      createdAt: new Date(1000),
      expiresAt: null,
      createdBy: null,
    };
    const [inserted, again] = await Promise.all([store.tokens.insertToken(token), store.tokens.insertToken(token)]);
    assert.deepEqual([inserted, again], ['inserted', 'name-taken']);
    await store.tokens.recordTokenUse(token.id, new Date(2000));
    const found = await store.tokens.findTokenBySecretHash(token.secretHash);
    assert.equal(found?.lastUsedAt?.getTime(), 2000);
    const revoked = await store.tokens.revokeToken('gc', new Date(3000));
    assert.equal(revoked?.token.revokedAt?.getTime(), 3000);
  });
});

describe('SQLite attempt records queued together', () => {
  it('commit in one transaction, each settled on its own: one that fails is refused alone', async () => {
    const dir = tempDir();
    const store = SqliteStore.open({ path: join(dir, 'plantstore.db') });
    try {
      await store.webhooks.insertSubscription({
        id: 'whk_grouped',
        url: 'https://example.com/hooks',
        secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        eventTypes: ['plant.created'],
        createdAt: new Date(),
      });
      await Promise.all(Array.from({ length: 200 }, (_, i) => store.plants.createPlant({ id: BigInt(i), name: 'p' })));
      const claimed = await store.webhooks.claimDueDeliveries({
        now: new Date(),
        limit: 1000,
        leaseMs: 60_000,
        owner: 'test',
      });
      assert.equal(claimed.length, 200);
      const before = store.batchStats().attempts ?? { batches: 0, operations: 0 };
      const record = ({ deliveryId, leaseOwner, attempt }: (typeof claimed)[number], latencyMs = 2) =>
        store.webhooks.recordAttempt({
          deliveryId,
          leaseOwner,
          attempt: { attempt, attemptedAt: new Date(), latencyMs, responseStatus: 200 },
          outcome: { kind: 'succeeded' },
        });
      // A latency of NaN is stored as NULL, which latency_ms refuses: that record fails, in the middle of the others.
      const results = await Promise.allSettled(claimed.map((d, i) => record(d, i === 100 ? Number.NaN : 2)));
      assert.deepEqual(
        results.map((r) => r.status),
        [...Array(100).fill('fulfilled'), 'rejected', ...Array(99).fill('fulfilled')],
      );
      assert.match(String((results[100] as PromiseRejectedResult).reason), /NOT NULL/);
      const after = store.batchStats().attempts ?? { batches: 0, operations: 0 };
      assert.ok(after.operations - before.operations >= 150, JSON.stringify({ before, after }));
      assert.ok(after.batches - before.batches <= 5, `200 records took ${after.batches - before.batches} transactions`);
      const db = new Database(join(dir, 'plantstore.db'), { readonly: true });
      try {
        const counted = db.prepare('SELECT status, count(*) AS n FROM webhook_deliveries GROUP BY status').all();
        assert.deepEqual(counted, [
          { status: 'pending', n: 1 },
          { status: 'succeeded', n: 199 },
        ]);
        const attempts = db.prepare('SELECT count(*) AS n FROM webhook_delivery_attempts').get() as { n: number };
        assert.equal(attempts.n, 199);
      } finally {
        db.close();
      }
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('SQLite group commit under failure', () => {
  it('fails every write of a batch that cannot commit, stores none of it, and recovers', async () => {
    const dir = tempDir();
    const path = join(dir, 'plantstore.db');
    const store = SqliteStore.open({ path, busyTimeoutMs: 50 });
    const locker = new Database(path);
    try {
      await store.plants.createPlant({ id: 1n, name: 'before' });
      locker.exec('BEGIN IMMEDIATE');
      const results = await Promise.allSettled([
        store.plants.createPlant({ id: 2n, name: 'a' }),
        store.plants.createPlant({ id: 3n, name: 'b' }),
        store.plants.deletePlant(1n),
      ]);
      for (const result of results) {
        assert.equal(result.status, 'rejected');
        assert.ok(result.reason instanceof StoreUnavailableError, String(result.reason));
      }
      locker.exec('ROLLBACK');
      assert.deepEqual(rowsOnDisk(path), [{ id: 1n, name: 'before', tag: null }]);
      assert.deepEqual(unversioned(await store.plants.createPlant({ id: 2n, name: 'a' })), {
        kind: 'created',
        plant: { id: 2n, name: 'a' },
      });
    } finally {
      locker.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('close() waits for accepted writes to commit; later writes are refused', async () => {
    const dir = tempDir();
    const path = join(dir, 'plantstore.db');
    const store = SqliteStore.open({ path });
    try {
      const pending = Array.from({ length: 300 }, (_, i) => store.plants.createPlant({ id: BigInt(i), name: `p${i}` }));
      const closed = store.close();
      await assert.rejects(store.plants.createPlant({ id: 1000n, name: 'late' }), StoreUnavailableError);
      await closed;
      assert.equal((await Promise.all(pending)).filter((o) => o.kind === 'created').length, 300);
      assert.equal(rowsOnDisk(path).length, 300);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
