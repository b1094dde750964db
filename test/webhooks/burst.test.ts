/**
 * A burst: an NDJSON import of BURST_PLANTS plants (10,000 in the slow suite, which CI runs on both runtimes and both
 * stores within its time; `BURST_PLANTS=100000` for the full burst, about 4 minutes on SQLite and 3 on PostgreSQL
 * here) with three subscriptions, a fast receiver, a slow one (answers after SLOW_MS) and one throttled at RATE per
 * second, against real service processes (two on PostgreSQL, sharing the outbox and the rate). Outcomes, each
 * against a baseline taken in the same run:
 * - the fast receiver gets every event once, signatures verified on a sample with standardwebhooks;
 * - it is not held back by the slow one: its time for the burst is within FAIRNESS_RATIO of its time for an
 *   import of the same size with only itself subscribed. The slow subscription holds at most half of each
 *   instance's slots while the fast one has deliveries due (without that share it would come to hold them all,
 *   and the fast one would get a slot only as a slow answer came back); what remains is the database's work for
 *   the other two subscriptions' deliveries, shared with the fast one's;
 * - the throttled one never gets more than RATE within a second (less ARRIVAL_JITTER_MS, see rate-receiver.ts);
 * - each service's resident memory after the burst is within MEMORY_RATIO of its memory after the baseline
 *   import: the backlog the slow and throttled subscriptions leave (nearly twice BURST_PLANTS pending deliveries)
 *   stays in the database, not in the process.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { issueToken } from '../../src/tokens/token-service.js';
import { postgresBackend, testBackends, type OpenedTestStore } from '../support/backends.js';
import { checkedFetch } from '../support/checked-fetch.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { verifySignature } from './receiver.js';
import { ARRIVAL_JITTER_MS, mostInWindow, startRateReceiver, type RateReceiver } from './rate-receiver.js';

const PLANTS = Number(process.env.BURST_PLANTS ?? 10_000);
const SLOW_MS = 200;
const RATE = 20;
const FAIRNESS_RATIO = 3;
const MEMORY_RATIO = 1.5;
const DELIVERY_BOUND_MS = 1_200_000;

function ndjson(from: number, count: number): string {
  const lines: string[] = [];
  for (let id = from; id < from + count; id += 1) lines.push(`{"id":${id},"name":"burst ${id}","tag":"burst"}`);
  return `${lines.join('\n')}\n`;
}

/** The process's resident set size, from /proc (Linux, where the suite runs). */
function residentBytes(service: ServiceProcess): number {
  const status = readFileSync(`/proc/${service.child.pid}/status`, 'utf8');
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  assert.ok(kib, 'VmRSS in /proc/<pid>/status');
  return Number(kib) * 1024;
}

for (const backend of testBackends())
  describe(`a ${PLANTS}-plant import with a fast, a slow and a throttled subscription [${backend.name}]`, () => {
    let opened: OpenedTestStore;
    let services: ServiceProcess[] = [];
    let token: string;
    const receivers: RateReceiver[] = [];

    before(async () => {
      opened = await backend.open();
      token = (await issueToken(opened.store.tokens, { name: 'burst', scopes: ['plants:write', 'admin'] })).secret;
      const env = {
        DATABASE_URL: opened.databaseUrl,
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        WEBHOOK_CONCURRENCY: '8',
      };
      const count = backend === postgresBackend ? 2 : 1;
      services = await Promise.all(Array.from({ length: count }, () => startServiceProcess(env)));
    });
    after(async () => {
      await Promise.all(services.map((service) => service.stop()));
      await Promise.all(receivers.map((receiver) => receiver.close()));
      await opened?.cleanup();
    });

    const subscribe = async (url: string, extra: object = {}) => {
      const response = await checkedFetch(`${services[0]?.url}/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url, ...extra }),
      });
      assert.equal(response.status, 201);
      return (await response.json()) as { id: string; secret: string };
    };

    /** Imports PLANTS plants from `from` and answers how long the fast receiver took to get them all. */
    const importAndDeliver = async (fast: RateReceiver, from: number): Promise<number> => {
      const had = fast.ids.size;
      const started = performance.now();
      const response = await checkedFetch(`${services[0]?.url}/plants/import`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
        body: ndjson(from, PLANTS),
      });
      const body = (await response.json()) as { created: number };
      assert.equal(response.status, 200);
      assert.equal(body.created, PLANTS);
      await fast.waitForIds(had + PLANTS, DELIVERY_BOUND_MS);
      return performance.now() - started;
    };

    it('delivers every event to the fast receiver, unheld by the slow one, the throttled one within its rate, in bounded memory', async () => {
      const sampleEvery = Math.max(1, Math.floor(PLANTS / 200));
      const fast = await startRateReceiver({ sampleEvery });
      receivers.push(fast);
      const fastSubscription = await subscribe(fast.url);

      const baselineMs = await importAndDeliver(fast, 1);
      const baselineMemory = services.map(residentBytes);

      const slow = await startRateReceiver({ delayMs: SLOW_MS, sampleEvery: 1000 });
      const throttled = await startRateReceiver({ sampleEvery: 1000 });
      receivers.push(slow, throttled);
      await subscribe(slow.url);
      const throttledSubscription = await subscribe(throttled.url, { maxPerSecond: RATE });
      const burstMs = await importAndDeliver(fast, 1 + PLANTS);
      const burstMemory = services.map(residentBytes);

      assert.equal(fast.ids.size, 2 * PLANTS, 'every event of both imports, once each');
      for (const request of fast.sample) verifySignature(fastSubscription.secret, request);
      for (const request of throttled.sample) verifySignature(throttledSubscription.secret, request);
      const ratio = burstMs / baselineMs;
      const report = {
        backend: backend.name,
        plants: PLANTS,
        baselineMs: Math.round(baselineMs),
        burstMs: Math.round(burstMs),
        ratio: Number(ratio.toFixed(2)),
        slowReceived: slow.arrivals.length,
        throttledReceived: throttled.arrivals.length,
        throttledMostIn750ms: mostInWindow(throttled.arrivals, 1000 - ARRIVAL_JITTER_MS),
        throttledMostIn1s: mostInWindow(throttled.arrivals, 1000),
        residentMiB: services.map((_, i) => [
          Math.round((baselineMemory[i] ?? 0) / 2 ** 20),
          Math.round((burstMemory[i] ?? 0) / 2 ** 20),
        ]),
      };
      process.stdout.write(`burst: ${JSON.stringify(report)}\n`);
      assert.ok(ratio <= FAIRNESS_RATIO, `the fast receiver took ${ratio.toFixed(2)}x its baseline time`);
      assert.ok(slow.arrivals.length > 0 && throttled.arrivals.length > 0, 'the other two were served meanwhile');
      assert.ok(
        report.throttledMostIn750ms <= RATE,
        `the throttled receiver got ${report.throttledMostIn750ms} within ${1000 - ARRIVAL_JITTER_MS} ms`,
      );
      services.forEach((_, i) =>
        assert.ok(
          (burstMemory[i] ?? 0) <= (baselineMemory[i] ?? 0) * MEMORY_RATIO,
          `instance ${i}: ${report.residentMiB[i]?.join(' -> ')} MiB`,
        ),
      );
    });
  });
