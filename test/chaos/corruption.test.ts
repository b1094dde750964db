/**
 * A corrupt SQLite store: found at start-up by the integrity check (/readyz is 503
 * and says why in the log, naming the file), and met while serving (503 with a log
 * line saying the store is corrupt), never a 500 "database disk image is malformed".
 */
import assert from 'node:assert/strict';
import { closeSync, openSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { issueToken } from '../../src/tokens/token-service.js';
import { startServiceProcess } from '../support/service-process.js';
import { tempDir } from '../support/temp.js';
import { checkedFetch } from '../support/checked-fetch.js';

const PLANTS = 5000;

/** A store with PLANTS plants (many b-tree pages), checkpointed and closed. */
async function storeWithPlants(): Promise<{ path: string; databaseUrl: string; token: string }> {
  const path = join(tempDir(), 'plantstore.db');
  const store = SqliteStore.open({ path });
  const { secret } = await issueToken(store.tokens, { name: 'reader', scopes: ['plants:read', 'plants:write'] });
  await Promise.all(
    Array.from({ length: PLANTS }, (_, i) =>
      store.plants.createPlant({ id: BigInt(i), name: `plant number ${i} with a longer name`, tag: 'fern' }),
    ),
  );
  await store.close();
  return { path, databaseUrl: `sqlite:${path}`, token: secret };
}

/** Overwrites the pages in the middle of the file with garbage, as a failing disk might. */
function corruptMiddle(path: string): void {
  const size = statSync(path).size;
  const fd = openSync(path, 'r+');
  try {
    const garbage = Buffer.alloc(4096 * 8, 0xa5);
    writeSync(fd, garbage, 0, garbage.length, Math.floor(size / 2 / 4096) * 4096);
  } finally {
    closeSync(fd);
  }
}

describe('a corrupt store [sqlite]', () => {
  it('is found by the check at start-up: never ready, and the log names the file and what to do', async () => {
    const { path, databaseUrl } = await storeWithPlants();
    corruptMiddle(path);
    const service = await startServiceProcess({ DATABASE_URL: databaseUrl });
    try {
      // Each /readyz logs why it is 503: first "still being checked", then what the check found.
      let line: string | undefined;
      for (let i = 0; i < 50 && line === undefined; i++) {
        const ready = await checkedFetch(`${service.url}/readyz`);
        assert.equal(ready.status, 503);
        assert.equal(((await ready.json()) as { error: number }).error, Errors.STORE_UNAVAILABLE.code);
        await new Promise((resolve) => setTimeout(resolve, 100));
        line = service
          .output()
          .split('\n')
          .find((l) => l.includes('is corrupt'));
      }
      assert.ok(line !== undefined, `no log line says the store is corrupt:\n${service.output()}`);
      assert.ok(line.includes(path), `the log line names the file: ${line}`);
      assert.match(line, /restore the file from a backup/);
    } finally {
      await service.stop('SIGKILL');
    }
  });

  it('a sound store is ready once checked', async () => {
    const { databaseUrl } = await storeWithPlants();
    const service = await startServiceProcess({ DATABASE_URL: databaseUrl });
    try {
      let status = 0;
      for (let i = 0; i < 50 && status !== 200; i++) {
        status = (await checkedFetch(`${service.url}/readyz`)).status;
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.equal(status, 200);
    } finally {
      await service.stop();
    }
  });

  it('met while serving: 503 and a log line saying so, never a 500', async () => {
    const { path, databaseUrl, token } = await storeWithPlants();
    const service = await startServiceProcess({ DATABASE_URL: databaseUrl });
    try {
      for (let i = 0; i < 50 && (await checkedFetch(`${service.url}/readyz`)).status !== 200; i++)
        await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal((await checkedFetch(`${service.url}/readyz`)).status, 200);
      corruptMiddle(path);
      const headers = { authorization: `Bearer ${token}` };
      const statuses = new Map<number, number>();
      let refused: unknown;
      for (let id = 0; id < PLANTS; id += 7) {
        const response = await checkedFetch(`${service.url}/plants/${id}`, { headers });
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        const body = await response.json();
        if (response.status === 503) refused = body;
      }
      const list = await checkedFetch(`${service.url}/plants?limit=1000&after=1000`, { headers });
      statuses.set(list.status, (statuses.get(list.status) ?? 0) + 1);
      assert.ok(!statuses.has(500), `no 500s: ${JSON.stringify([...statuses])}`);
      assert.ok(statuses.has(503), `the corruption was met: ${JSON.stringify([...statuses])}`);
      assert.equal((refused as { error: number }).error, Errors.STORE_UNAVAILABLE.code);
      assert.match(
        service.output(),
        /"msg":"store unavailable: the SQLite store is corrupt \(SQLITE_CORRUPT\): stop the service and restore the file from a backup"/,
      );
      // Readiness follows what the reads met, so a balancer stops sending traffic.
      assert.equal((await checkedFetch(`${service.url}/readyz`)).status, 503);
    } finally {
      await service.stop('SIGKILL');
    }
  });

  it('met by reads in the reader threads (pages, searches, counts): /readyz turns 503', async () => {
    const { path, databaseUrl, token } = await storeWithPlants();
    const service = await startServiceProcess({ DATABASE_URL: databaseUrl });
    try {
      for (let i = 0; i < 50 && (await checkedFetch(`${service.url}/readyz`)).status !== 200; i++)
        await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal((await checkedFetch(`${service.url}/readyz`)).status, 200);
      corruptMiddle(path);
      const headers = { authorization: `Bearer ${token}`, prefer: 'count=exact' };
      const statuses: number[] = [];
      for (const query of [
        'limit=1000',
        'limit=1000&after=1000',
        'limit=1000&after=2500',
        'q=number&limit=1000',
        'q=longer&sort=name&limit=1000',
      ]) {
        statuses.push((await checkedFetch(`${service.url}/plants?${query}`, { headers })).status);
      }
      assert.ok(!statuses.includes(500), `no 500s: ${statuses.join(', ')}`);
      assert.ok(statuses.includes(503), `the corruption was met: ${statuses.join(', ')}`);
      const ready = await checkedFetch(`${service.url}/readyz`);
      assert.equal(
        ready.status,
        503,
        service
          .output()
          .split('\n')
          .filter((line) => line.includes('unavailable'))
          .join('\n'),
      );
      assert.equal(((await ready.json()) as { error: number }).error, Errors.STORE_UNAVAILABLE.code);
    } finally {
      await service.stop('SIGKILL');
    }
  });
});
