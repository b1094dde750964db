/**
 * A webhook receiver for rate and burst tests: node:http on 127.0.0.1 that answers 204 after `delayMs` (a slow
 * receiver) and records when each request arrived, counting distinct webhook-ids. Bodies are kept only for a sample.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { ReceivedWebhook } from './receiver.js';

export interface RateReceiver {
  readonly url: string;
  /** performance.now() of each request's arrival (its body read), in arrival order. */
  readonly arrivals: number[];
  readonly ids: Set<string>;
  /** Every `sampleEvery`-th request, whole, for signature checks. */
  readonly sample: ReceivedWebhook[];
  /** Resolves once `count` distinct webhook-ids arrived, or rejects after `timeoutMs`. */
  waitForIds(count: number, timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

export async function startRateReceiver(
  options: { delayMs?: number; sampleEvery?: number } = {},
): Promise<RateReceiver> {
  const arrivals: number[] = [];
  const ids = new Set<string>();
  const sample: ReceivedWebhook[] = [];
  const waiters = new Set<() => void>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      arrivals.push(performance.now());
      ids.add(String(request.headers['webhook-id']));
      if (arrivals.length % (options.sampleEvery ?? 1) === 1 || options.sampleEvery === 1)
        sample.push(received(request.method, request.url, request.headers, Buffer.concat(chunks).toString('utf8')));
      const answer = () => response.writeHead(204).end();
      if (options.delayMs === undefined) answer();
      else setTimeout(answer, options.delayMs);
      for (const wake of waiters) wake();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    arrivals,
    ids,
    sample,
    waitForIds(count, timeoutMs) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (ids.size < count) return;
          cleanup();
          resolve();
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`rate receiver: ${ids.size} of ${count} events within ${timeoutMs} ms`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

function received(method = '', path = '', headers: IncomingHttpHeaders, body: string): ReceivedWebhook {
  return { method, path, headers, body, answered: 204 };
}

/** The most arrivals within any window of `windowMs` (sliding, half-open). */
export function mostInWindow(times: readonly number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end += 1) {
    while ((sorted[end] as number) - (sorted[start] as number) >= windowMs) start += 1;
    most = Math.max(most, end - start + 1);
  }
  return most;
}

/**
 * A receiver sees a run of sends spread by their trip (connection, event loop): the end of one run and the start
 * of the next, a second apart when sent, can arrive closer. Counting in windows this much shorter than a second
 * tolerates that much jitter without letting two whole runs into one window.
 */
export const ARRIVAL_JITTER_MS = 250;
