/**
 * fetch for tests that talk to a service they do not hold in-process (a `plantstore serve` child): every response
 * is checked against the OpenAPI document the same source serves, and one that does not match fails the request
 * that received it. A JSON body is read from a clone, so the caller still reads its own.
 */
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/index.js';
import { sqliteBackend } from './backends.js';
import { ContractCheck } from './contract-check.js';
import { contractMismatch } from './checked-app.js';

let documentCheck: Promise<ContractCheck> | undefined;

/**
 * The document the source builds, not one read from the service: a request of the check's own would show in the
 * service's logs, metrics and rate limits, which these tests count.
 */
function checkFor(): Promise<ContractCheck> {
  documentCheck ??= documentOfSource();
  return documentCheck;
}

/** The document of an app on a throw-away SQLite store (what `plantstore serve` of this source serves). */
async function documentOfSource(): Promise<ContractCheck> {
  const opened = await sqliteBackend.open();
  try {
    const app = await buildApp(loadConfig({ DATABASE_URL: opened.databaseUrl, LOG_LEVEL: 'silent' }), {
      store: opened.store,
    });
    try {
      return ContractCheck.of(app);
    } finally {
      await app.close();
    }
  } finally {
    await opened.cleanup();
  }
}

/** What is wrong with a response already read (its body text given), by the service's document. */
export async function responseProblems(
  method: string,
  url: URL,
  response: Response,
  body: string | undefined,
): Promise<string[]> {
  const check = await checkFor();
  return check.problems({
    method,
    url: `${url.pathname}${url.search}`,
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body,
  });
}

/** fetch(), with the response checked against the service's OpenAPI document. */
export async function checkedFetch(input: string | URL, init?: RequestInit): Promise<Response> {
  const url = new URL(input);
  // The document first: a service stopped while this request is answered still has its answer checked.
  await checkFor();
  const response = await fetch(url, init);
  const type = response.headers.get('content-type') ?? '';
  // Only a JSON body (or what an empty answer carries) is read: a stream (events, an export) is left to the caller,
  // its headers still checked.
  const read = type.startsWith('application/json') || response.status === 204 || response.status === 304;
  const problems = await responseProblems(
    init?.method ?? 'GET',
    url,
    response,
    read ? await response.clone().text() : undefined,
  );
  if (problems.length > 0) throw contractMismatch(problems);
  return response;
}
