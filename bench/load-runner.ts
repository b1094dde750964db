/**
 * The load generator: one autocannon run, in its own process so that it neither
 * shares a CPU queue with the bench's bookkeeping nor with either server.
 *
 * Usage: node --import tsx bench/load-runner.ts '<LoadSpec as JSON>'
 * Prints one line: the LoadResult as JSON.
 *
 * Latencies are recorded per response at full (sub-millisecond) precision; the
 * histogram autocannon keeps has 1 ms buckets, too coarse for a 0.4 ms p50.
 */
import autocannon, { type AutocannonClient, type AutocannonRequest, type AutocannonResult } from 'autocannon';
import type { CaseName } from './options.js';
import { paceClient } from './pacing.js';
import { COUNT_TAG_PATH, createBody, LIST_PAGE, randomSeededId, searchPath, updateBody } from './workload.js';

export interface LoadSpec {
  readonly url: string;
  readonly case: CaseName;
  /** Bearer token; the floor ignores it, but gets the same bytes. */
  readonly token: string;
  /** Unique per run, so creates never repeat an id across runs. */
  readonly run: number;
  /** Seeded ids are 1..storeSize. */
  readonly storeSize: number;
  readonly connections: number;
  readonly duration: number;
  /** Requests per second to offer; omitted for a closed-loop (maximum) run. */
  readonly rate?: number;
  /** sort-name-deep: the cursor of the page DEEP_PAGE pages into the name order (the floor ignores it). */
  readonly deepNameCursor?: string;
}

export interface LoadResult {
  readonly requests: number;
  readonly seconds: number;
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** Responses by status code; anything but 200 means the run is not a clean measurement. */
  readonly statuses: Record<string, number>;
  readonly errors: number;
  readonly timeouts: number;
  /** CPU time the server used per request during the run, in µs (filled in by the bench). */
  readonly cpuMicrosPerRequest?: number;
}

function requestFor(spec: LoadSpec): AutocannonRequest {
  const headers = { authorization: `Bearer ${spec.token}`, 'content-type': 'application/json' };
  switch (spec.case) {
    case 'create': {
      let k = 0;
      return {
        method: 'POST',
        path: '/plants',
        headers,
        setupRequest: (r) => ({ ...r, body: createBody(spec.run, k++) }),
      };
    }
    case 'update': {
      // A JSON Merge Patch of a random seeded plant, without If-Match: the store decides each one.
      let k = 0;
      const patch = { ...headers, 'content-type': 'application/merge-patch+json' };
      return {
        method: 'PATCH',
        headers: patch,
        setupRequest: (r) => ({
          ...r,
          path: `/plants/${randomSeededId(spec.storeSize)}`,
          body: updateBody(spec.run, k++),
        }),
      };
    }
    case 'get':
      return {
        method: 'GET',
        headers,
        setupRequest: (r) => ({ ...r, path: `/plants/${randomSeededId(spec.storeSize)}` }),
      };
    case 'list': {
      const lastStart = Math.max(1, spec.storeSize - LIST_PAGE);
      return {
        method: 'GET',
        headers,
        setupRequest: (r) => ({ ...r, path: `/plants?limit=${LIST_PAGE}&after=${randomSeededId(lastStart) - 1}` }),
      };
    }
    case 'search':
    case 'search-common':
      return {
        method: 'GET',
        headers,
        setupRequest: (r) => ({ ...r, path: searchPath(spec.case === 'search-common') }),
      };
    case 'sort-name':
      return { method: 'GET', headers, path: `/plants?limit=${LIST_PAGE}&sort=name` };
    case 'sort-name-deep':
      if (spec.deepNameCursor === undefined) throw new Error("sort-name-deep needs the store's deep cursor");
      return { method: 'GET', headers, path: `/plants?limit=${LIST_PAGE}&sort=name&cursor=${spec.deepNameCursor}` };
    case 'count-tag':
      return { method: 'GET', headers: { ...headers, prefer: 'count=exact' }, path: COUNT_TAG_PATH };
  }
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] as number;
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  const statuses: Record<string, number> = {};
  let index = 0;
  const record = (status: number, _bytes: number, ms: number) => {
    if (count === latencies.length) {
      const grown = new Float64Array(latencies.length * 2);
      grown.set(latencies);
      latencies = grown;
    }
    latencies[count++] = ms;
    statuses[status] = (statuses[status] ?? 0) + 1;
  };
  const setupClient = (client: AutocannonClient) => {
    client.on('response', record);
    if (spec.rate !== undefined) {
      const periodMs = (1000 * spec.connections) / spec.rate;
      paceClient(client, periodMs, (periodMs * index++) / spec.connections);
    }
  };
  const started = performance.now();
  const result = await new Promise<AutocannonResult>((resolve, reject) => {
    autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        duration: spec.duration,
        timeout: 10,
        requests: [requestFor(spec)],
        setupClient,
      },
      (error, done) => (error === null ? resolve(done) : reject(error)),
    );
  });
  const seconds = (performance.now() - started) / 1000;
  const sorted = latencies.subarray(0, count).sort();
  return {
    requests: count,
    seconds,
    rps: count / seconds,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted[count - 1] ?? Number.NaN,
    statuses,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

if (process.argv[2] !== undefined) {
  const spec = JSON.parse(process.argv[2]) as LoadSpec;
  process.stdout.write(`${JSON.stringify(await runLoad(spec))}\n`);
}
