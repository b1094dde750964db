/**
 * `npm run soak`: the real service process (`plantstore serve`) under a steady
 * offered load for minutes, to show it holds up over time: zero errors, flat
 * memory, and its latency at a rate it can sustain.
 *
 * The load is a mix of creates (each a new id), reads of seeded plants and small
 * list pages, offered at a fixed rate by autocannon (overallRate; latencies are
 * corrected for coordinated omission). Memory is sampled every 10 s: RSS from
 * /proc/<pid>/status, the V8 heap from the service's own /metrics.
 *
 *   npm run soak                                  # 180 s at 400 req/s, SQLite
 *   npm run soak -- --duration 600 --rate 800     # or SOAK_DURATION / SOAK_RATE
 *   SOAK_DATABASE_URL=postgres://... npm run soak # an existing, empty database
 *
 * Exits 1 if any request failed (an error, a timeout or a non-2xx answer).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openStore } from '../../src/store/open-store.js';
import { freePort } from '../support/free-port.js';
import { issueToken } from '../../src/tokens/token-service.js';

interface LatencyPercentiles {
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly p99_9: number;
  readonly max: number;
}

interface SoakResult {
  readonly requests: { readonly total: number; readonly average: number };
  readonly latency: LatencyPercentiles;
  readonly errors: number;
  readonly timeouts: number;
  readonly non2xx: number;
  readonly statusCodeStats: Record<string, { count: number }>;
  readonly duration: number;
}

interface SoakRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

type Autocannon = (
  options: {
    url: string;
    connections: number;
    duration: number;
    overallRate: number;
    timeout: number;
    requests: { setupRequest: (request: SoakRequest) => SoakRequest }[];
  },
  done: (error: Error | null, result: SoakResult) => void,
) => unknown;

// Loaded through require: autocannon ships no types, and bench/ declares only the slice it uses.
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const CLI = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const SEEDED = 1000;

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string' },
    rate: { type: 'string' },
    connections: { type: 'string' },
    'database-url': { type: 'string' },
  },
});
const settings = {
  durationS: Number(args.duration ?? process.env.SOAK_DURATION ?? 180),
  rate: Number(args.rate ?? process.env.SOAK_RATE ?? 400),
  connections: Number(args.connections ?? process.env.SOAK_CONNECTIONS ?? 16),
  databaseUrl: args['database-url'] ?? process.env.SOAK_DATABASE_URL,
};

const log = (line: string) => process.stdout.write(`soak: ${line}\n`);

interface Memory {
  readonly rssMb: number;
  readonly heapUsedMb: number | undefined;
}

async function sampleMemory(child: ChildProcess, url: string, adminToken: string): Promise<Memory> {
  const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
  const rssKb = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? Number.NaN);
  let heapUsedMb: number | undefined;
  try {
    const metrics = await (
      await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${adminToken}` } })
    ).text();
    const used = /^nodejs_heap_size_used_bytes\s+([0-9.e+]+)/m.exec(metrics)?.[1];
    heapUsedMb = used === undefined ? undefined : Number(used) / 2 ** 20;
  } catch {
    heapUsedMb = undefined;
  }
  return { rssMb: rssKb / 1024, heapUsedMb };
}

const mb = (value: number | undefined) => (value === undefined ? 'n/a' : `${value.toFixed(1)} MB`);

async function main(): Promise<number> {
  const workDir = mkdtempSync(join(tmpdir(), 'plantstore-soak-'));
  const databaseUrl = settings.databaseUrl ?? `sqlite:${join(workDir, 'soak.db')}`;
  const store = await openStore(databaseUrl);
  const token = (
    await issueToken(store.tokens, { name: `soak-${Date.now()}`, scopes: ['plants:read', 'plants:write', 'admin'] })
  ).secret;
  await store.close();

  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'serve'], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'warn',
      LOG_FORMAT: 'json',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    for (let i = 0; ; i++) {
      const up = await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (up) break;
      if (i > 200 || child.exitCode !== null) throw new Error('the service did not start');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const auth = { authorization: `Bearer ${token}` };
    for (let id = 1; id <= SEEDED; id++) {
      const response = await fetch(`${url}/plants`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: `{"id": ${id}, "name": "seed ${id}", "tag": "soak"}`,
      });
      await response.arrayBuffer();
    }

    log(`service pid ${child.pid} at ${url}, store ${databaseUrl.replace(/\/\/[^@]*@/, '//***@')}`);
    log(
      `offered load: ${settings.rate} req/s for ${settings.durationS} s over ${settings.connections} connections (50% create, 40% read, 10% list)`,
    );
    const start = await sampleMemory(child, url, token);
    log(`memory before the load: RSS ${mb(start.rssMb)}, heap used ${mb(start.heapUsedMb)}`);
    const samples: Memory[] = [];
    const loadStarted = Date.now();
    const sampler = setInterval(() => {
      void sampleMemory(child, url, token).then((m) => {
        samples.push(m);
        log(`  t+${Math.round((Date.now() - loadStarted) / 1000)}s RSS ${mb(m.rssMb)}, heap used ${mb(m.heapUsedMb)}`);
      });
    }, 10_000);

    let nextId = 10_000_000;
    let n = 0;
    const result = await new Promise<SoakResult>((resolve, reject) => {
      autocannon(
        {
          url,
          connections: settings.connections,
          duration: settings.durationS,
          overallRate: settings.rate,
          timeout: 10,
          requests: [
            {
              setupRequest: (request) => {
                const kind = n++ % 10;
                if (kind < 5) {
                  return {
                    ...request,
                    method: 'POST',
                    path: '/plants',
                    headers: { ...auth, 'content-type': 'application/json' },
                    body: `{"id": ${nextId++}, "name": "soak plant", "tag": "soak"}`,
                  };
                }
                if (kind < 9)
                  return {
                    ...request,
                    method: 'GET',
                    path: `/plants/${1 + (n % SEEDED)}`,
                    headers: auth,
                    body: undefined,
                  };
                return {
                  ...request,
                  method: 'GET',
                  path: `/plants?limit=10&after=${n % SEEDED}`,
                  headers: auth,
                  body: undefined,
                };
              },
            },
          ],
        },
        (error, value) => (error === null ? resolve(value) : reject(error)),
      );
    });
    clearInterval(sampler);
    const end = await sampleMemory(child, url, token);

    const failures = result.errors + result.timeouts + result.non2xx;
    log('');
    log(
      `requests:  ${result.requests.total} in ${result.duration} s (${result.requests.average.toFixed(0)} req/s achieved, ${settings.rate} offered)`,
    );
    log(
      `statuses:  ${JSON.stringify(Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count])))}`,
    );
    log(`failures:  ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx`);
    log(
      `latency:   p50 ${result.latency.p50} ms, p90 ${result.latency.p90} ms, p99 ${result.latency.p99} ms, p99.9 ${result.latency.p99_9} ms, max ${result.latency.max} ms`,
    );
    // "Start" is the first sample under load (t+10 s): warmed up, caches and pools filled.
    const warm = samples[0] ?? start;
    log(`memory:    before the load RSS ${mb(start.rssMb)}, heap used ${mb(start.heapUsedMb)}`);
    log(`           start (t+10s)   RSS ${mb(warm.rssMb)}, heap used ${mb(warm.heapUsedMb)}`);
    log(`           end             RSS ${mb(end.rssMb)}, heap used ${mb(end.heapUsedMb)}`);
    const rss = [...samples, end].map((s) => s.rssMb);
    log(`           RSS under load: min ${mb(Math.min(...rss))}, max ${mb(Math.max(...rss))} (${rss.length} samples)`);
    log(failures === 0 ? 'result:    PASS (zero failures)' : `result:    FAIL (${failures} failed requests)`);
    return failures === 0 ? 0 : 1;
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
    rmSync(workDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`soak: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(2);
  },
);
