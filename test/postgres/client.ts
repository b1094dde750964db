/** A minimal HTTP client for tests against service processes: raw bodies, bounded in time. */
import { checkedFetch } from '../support/checked-fetch.js';

export interface Reply {
  readonly status: number;
  readonly body: string;
  readonly headers: Headers;
}

/** Each request gives up after this long: a hang fails the test instead of stalling the run. */
const REQUEST_TIMEOUT_MS = 15_000;

export async function call(url: string, init: { method?: string; token?: string; body?: string } = {}): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const response = await checkedFetch(url, {
    method: init.method ?? 'GET',
    headers,
    body: init.body,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  return { status: response.status, body: await response.text(), headers: response.headers };
}

export const createPlant = (base: string, token: string, body: string) =>
  call(`${base}/plants`, { method: 'POST', token, body });
export const readPlant = (base: string, token: string, id: string) => call(`${base}/plants/${id}`, { token });

/** Polls `probe` until it returns true, or fails after `timeoutMs`. */
export async function eventually(what: string, probe: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
