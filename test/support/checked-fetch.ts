/**
 * fetch for tests that talk to a service they do not hold in-process (a `plantstore serve` child): every response
 * is checked against the OpenAPI document that service serves (read once per origin), and one that does not match
 * fails the request that received it. A JSON body is read from a clone, so the caller still reads its own.
 */
import { ContractCheck } from './contract-check.js';
import { contractMismatch } from './checked-app.js';

const checks = new Map<string, Promise<ContractCheck>>();

async function documentCheck(origin: string): Promise<ContractCheck> {
  const response = await fetch(`${origin}/openapi.json`, { signal: AbortSignal.timeout(15_000) });
  if (response.status !== 200) throw new Error(`${origin}/openapi.json answered ${response.status}`);
  return new ContractCheck((await response.json()) as Record<string, unknown>);
}

function checkFor(origin: string): Promise<ContractCheck> {
  let check = checks.get(origin);
  if (check === undefined) {
    check = documentCheck(origin);
    // A failed read is not kept: the next request (after a restart, say) reads it again.
    check.catch(() => checks.delete(origin));
    checks.set(origin, check);
  }
  return check;
}

/** fetch(), with the response checked against the document the service at the URL's origin serves. */
export async function checkedFetch(input: string | URL, init?: RequestInit): Promise<Response> {
  const url = new URL(input);
  // The document first: a service stopped while this request is answered still has its answer checked.
  const check = await checkFor(url.origin);
  const response = await fetch(url, init);
  const type = response.headers.get('content-type') ?? '';
  // Only a JSON body is read: a stream (events, an export) is left to the caller, its headers still checked.
  const body = type.startsWith('application/json') ? await response.clone().text() : undefined;
  const problems = check.problems({
    method: init?.method ?? 'GET',
    url: `${url.pathname}${url.search}`,
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body: response.status === 204 || response.status === 304 ? await response.clone().text() : body,
  });
  if (problems.length > 0) throw contractMismatch(problems);
  return response;
}
