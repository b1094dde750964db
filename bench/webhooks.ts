/**
 * The webhooks phase: (a) deliveries per second to each subscription from the start of a POST /plants/import until
 * each subscription has every event, with fast local receivers (answering 204 at once); the import itself is
 * over long before (its events are written with its plants), so this is the rate a backlog drains at; (b) what
 * subscriptions cost creates: the create case on a service whose store has `subscriptions` subscriptions against
 * one with none, their runs interleaved (so a slow spell of the shared machine hits both), quoted as ratios of
 * the medians.
 */
import { once } from 'node:events';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LoadResult, LoadSpec } from './load-runner.js';
import type { BenchOptions, StoreName } from './options.js';
import { cli, startService, stop, type Running } from './processes.js';
import { median } from './report.js';
import { prepareStore, type PreparedStore } from './stores.js';

export interface WebhookFigures {
  readonly store: StoreName;
  readonly subscriptions: number;
  readonly importPlants: number;
  readonly importSeconds: number;
  /** Each subscription's deliveries per second from the import's start until it had them all (the slowest). */
  readonly perSubscriptionPerSecond: number;
  /** Every subscription's deliveries together, per second, until the last one had them all. */
  readonly allPerSecond: number;
  readonly createWithout: CreateFigures;
  readonly createWith: CreateFigures;
}

interface CreateFigures {
  readonly rps: number;
  readonly p99: number;
  readonly cpuMicros: number;
}

type Load = (
  server: Running,
  spec: Omit<LoadSpec, 'url' | 'run'>,
) => Promise<LoadResult & { cpuMicrosPerRequest: number }>;

/** Fast receivers on one server, one path per subscription, counting what each got and when. */
async function startReceivers() {
  const counts = new Map<string, number>();
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      counts.set(req.url ?? '', (counts.get(req.url ?? '') ?? 0) + 1);
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    count: (path: string) => counts.get(path) ?? 0,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

function ndjson(from: number, count: number): Buffer {
  const lines: string[] = [];
  for (let id = from; id < from + count; id += 1) lines.push(`{"id":${id},"name":"webhook bench ${id}","tag":"hook"}`);
  return Buffer.from(`${lines.join('\n')}\n`);
}

function post(server: Running, path: string, token: string, body: Buffer): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${server.url}${path}`,
      { method: 'POST', headers: { 'content-type': 'application/x-ndjson', authorization: `Bearer ${token}` } },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function benchWebhooks(
  store: StoreName,
  options: BenchOptions,
  logFile: (name: string) => string,
  load: Load,
): Promise<WebhookFigures | string> {
  const without = await prepareStore(store, 0, options.postgresUrl);
  if ('skipped' in without) return `${store}: webhooks skipped: ${without.skipped}`;
  const withHooks = (await prepareStore(store, 0, options.postgresUrl)) as PreparedStore;
  const receivers = await startReceivers();
  const paths = Array.from({ length: options.webhookSubscriptions }, (_, i) => `/hook-${i}`);
  const env = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' };
  for (const path of paths)
    await cli(
      ['webhook', 'add', receivers.url(path), '--event-types', 'plant.created'],
      withHooks.databaseUrl,
      undefined,
      env,
    );
  const services: Running[] = [];
  try {
    const plain = await startService({
      databaseUrl: without.databaseUrl,
      logLevel: options.logLevel,
      logFile: logFile('plain'),
    });
    services.push(plain);
    const hooked = await startService({
      databaseUrl: withHooks.databaseUrl,
      logLevel: options.logLevel,
      logFile: logFile('hooked'),
      env,
    });
    services.push(hooked);

    // (a) An import into the store with subscriptions, its deliveries counted as they arrive.
    const count = options.webhookImport;
    const body = ndjson(1_000_000_001, count);
    const started = performance.now();
    const imported = await post(hooked, '/plants/import', withHooks.token, body);
    const importSeconds = (performance.now() - started) / 1000;
    if (imported.status !== 200)
      throw new Error(`${store}: import answered ${imported.status} ${imported.body.slice(0, 300)}`);
    const done = new Map<string, number>();
    const deadline = performance.now() + 600_000;
    while (done.size < paths.length) {
      for (const path of paths)
        if (!done.has(path) && receivers.count(path) >= count) done.set(path, (performance.now() - started) / 1000);
      if (performance.now() > deadline) throw new Error(`${store}: deliveries did not finish within 10 minutes`);
      await sleep(20);
    }

    // (b) Creates on both services, their runs interleaved.
    const spec = {
      case: 'create' as const,
      token: without.token,
      storeSize: 0,
      connections: options.connections,
      duration: options.duration,
    };
    const plainRuns: (LoadResult & { cpuMicrosPerRequest: number })[] = [];
    const hookedRuns: (LoadResult & { cpuMicrosPerRequest: number })[] = [];
    await load(plain, { ...spec, duration: 1 });
    await load(hooked, { ...spec, token: withHooks.token, duration: 1 });
    for (let i = 0; i < options.repeats; i += 1) {
      plainRuns.push(await load(plain, spec));
      hookedRuns.push(await load(hooked, { ...spec, token: withHooks.token }));
    }
    const figures = (runs: readonly (LoadResult & { cpuMicrosPerRequest: number })[]): CreateFigures => ({
      rps: median(runs.map((r) => r.rps)),
      p99: median(runs.map((r) => r.p99)),
      cpuMicros: median(runs.map((r) => r.cpuMicrosPerRequest)),
    });
    return {
      store,
      subscriptions: paths.length,
      importPlants: count,
      importSeconds,
      perSubscriptionPerSecond: count / Math.max(...done.values()),
      allPerSecond: (count * paths.length) / Math.max(...done.values()),
      createWithout: figures(plainRuns),
      createWith: figures(hookedRuns),
    };
  } finally {
    for (const service of services) await stop(service);
    await receivers.close();
    await without.cleanup();
    await withHooks.cleanup();
  }
}

export function formatWebhooks(rows: readonly WebhookFigures[]): string {
  const ratio = (a: number, b: number) => (a / b).toFixed(2);
  return [
    '| webhooks | subscriptions | import plants | import s | deliveries/s per subscription | all subscriptions | ' +
      'create req/s without / with | with/without | create p99 ms without / with | ' +
      'CPU µs per create without / with | with/without |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.store} | ${r.subscriptions} | ${r.importPlants} | ${r.importSeconds.toFixed(2)} | ${Math.round(r.perSubscriptionPerSecond)} | ` +
        `${Math.round(r.allPerSecond)} | ${Math.round(r.createWithout.rps)} / ${Math.round(r.createWith.rps)} | ` +
        `${ratio(r.createWith.rps, r.createWithout.rps)} | ${r.createWithout.p99.toFixed(1)} / ${r.createWith.p99.toFixed(1)} | ` +
        `${Math.round(r.createWithout.cpuMicros)} / ${Math.round(r.createWith.cpuMicros)} | ` +
        `${ratio(r.createWith.cpuMicros, r.createWithout.cpuMicros)} |`,
    ),
  ].join('\n');
}
