/**
 * Heavy reads never stall other requests: searches whose term has a common prefix
 * but no match, searches sorted by name and exact counts of a search, run back to
 * back over many plants, while a probe reads one plant over a real socket. What
 * is compared with the same run's idle baseline is the event loop's lag (its p99,
 * while the probes run): a read that runs on the event loop shows there as its
 * whole duration, while the probe's own latency also grows with the CPU the heavy
 * reads take from it on a small machine, wherever they run. On SQLite those reads
 * run in the reader threads, on PostgreSQL in the server.
 *
 * And a read that runs past READ_TIME_LIMIT_MS is stopped with its Error record.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { describe, it } from 'node:test';
import { buildCheckedApp } from '../support/checked-app.js';
import { loadConfig } from '../../src/config/index.js';
import { Errors } from '../../src/http/errors.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/types.js';
import { issueToken } from '../../src/tokens/token-service.js';
import { discardedLog } from '../support/log-streams.js';
import { listeningHarness } from '../hostile/listening.js';
import { testBackends } from '../support/backends.js';
import { tempDir } from '../support/temp.js';
import { numberedImportRows } from '../support/plant-rows.js';

const PLANTS = 60_000;
const PROBES = 40;

/** PLANTS plants whose names share the word "monstera", seeded through an import (fast on both stores). */
async function seed(store: Store): Promise<void> {
  const running = await store.plants.beginImport();
  for (let start = 1; start <= PLANTS; start += 5000) {
    const rows = numberedImportRows(start, 5000, (id) => `Monstera deliciosa ${id}`, start);
    await running.stage(rows);
  }
  const outcome = await running.apply('all', 10);
  assert.equal(outcome.kind, 'applied');
}

const HEAVY = [
  '/plants?q=monsterx&limit=1',
  '/plants?q=monstera&sort=name&limit=1',
  '/plants?q=monst%20deliciosa&sort=-name&limit=1',
];

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** The probes' latencies, and the event loop's p99 lag while they ran, in ms. */
async function probe(url: string, headers: Record<string, string>): Promise<{ latencies: number[]; lagP99: number }> {
  const lag = monitorEventLoopDelay({ resolution: 1 });
  lag.enable();
  const latencies = await probeLatencies(url, headers);
  lag.disable();
  return { latencies, lagP99: lag.percentile(99) / 1e6 };
}

async function probeLatencies(url: string, headers: Record<string, string>): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < PROBES; i++) {
    const started = performance.now();
    const response = await fetch(`${url}/plants/1`, { headers });
    assert.equal(response.status, 200);
    await response.text();
    latencies.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return latencies;
}

for (const backend of testBackends()) {
  describe(`heavy reads [${backend.name}]`, () => {
    it('searches and counts over many plants do not hold up a probe reading one plant', async (t) => {
      const harness = await listeningHarness({ backend });
      t.after(() => harness.close());
      await seed(harness.store);
      const headers = { authorization: `Bearer ${harness.tokens.read}` };
      await probeLatencies(harness.url, headers); // warm-up: connections, statements, page cache
      const idle = await probe(harness.url, headers);

      let running = true;
      let heavyDone = 0;
      const heavy = async (path: string, extra: Record<string, string> = {}) => {
        while (running) {
          const response = await fetch(`${harness.url}${path}`, { headers: { ...headers, ...extra } });
          assert.equal(response.status, 200, await response.text());
          heavyDone++;
        }
      };
      // Two at a time: enough to keep a thread busy, without taking every core of a small machine.
      const loops = [heavy(HEAVY[0] as string), heavy(HEAVY[1] as string, { prefer: 'count=exact' })];
      const busy = await probe(harness.url, headers);
      running = false;
      await Promise.all(loops);

      const lagRatio = busy.lagP99 / idle.lagP99;
      const probeRatio = median(busy.latencies) / median(idle.latencies);
      t.diagnostic(
        `event-loop lag p99 idle ${idle.lagP99.toFixed(1)} ms, busy ${busy.lagP99.toFixed(1)} ms (x${lagRatio.toFixed(1)}); probe p50 x${probeRatio.toFixed(1)}; ${heavyDone} heavy reads`,
      );
      assert.ok(heavyDone >= HEAVY.length, 'the heavy reads ran during the probes');
      // A read on the event loop makes both grow tens of times over; sharing a small machine's cores
      // with the reads, a few times at most.
      assert.ok(lagRatio < 12, `the event loop's p99 lag grew x${lagRatio.toFixed(1)} while heavy reads ran`);
      assert.ok(probeRatio < 12, `the probe's median latency grew x${probeRatio.toFixed(1)} while heavy reads ran`);
    });
  });
}

describe('the read time budget [sqlite]', () => {
  it('stops a read that runs past READ_TIME_LIMIT_MS with its Error record', async (t) => {
    const path = join(tempDir(), 'plantstore.db');
    const store = SqliteStore.open({ path, readTimeLimitMs: 1 });
    t.after(() => store.close());
    await seed(store);
    const { secret } = await issueToken(store.tokens, { name: 'reader', scopes: ['plants:read'] });
    const app = await buildCheckedApp(loadConfig({ DATABASE_URL: `sqlite:${path}` }), {
      store,
      logStream: discardedLog(),
    });
    t.after(() => app.close());
    const headers = { authorization: `Bearer ${secret}`, prefer: 'count=exact' };
    // A count of a search that matches every plant visits them all: far more than 1 ms.
    const response = await app.inject({ method: 'GET', url: '/plants?q=monstera&sort=name&limit=1', headers });
    assert.equal(response.statusCode, Errors.READ_TIME_LIMIT.status, response.body);
    assert.equal(response.json().error, Errors.READ_TIME_LIMIT.code);
    assert.match(response.json().message, /ran longer than 1 ms/);
    assert.ok(response.headers['retry-after'] !== undefined);
    // A point read is not a budgeted one, and the reader threads still serve.
    assert.equal((await app.inject({ method: 'GET', url: '/plants/1', headers })).statusCode, 200);
  });
});
