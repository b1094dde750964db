/** A harness app listening on a real socket (127.0.0.1, a free port), for attacks over TCP. */
import assert from 'node:assert/strict';
import { isCataloguedError } from '../support/assertions.js';
import { createHarness, type Harness, type HarnessOptions } from '../support/harness.js';
import type { RawResponse } from './raw-http.js';

export interface ListeningHarness extends Harness {
  readonly url: string;
}

export async function listeningHarness(options: HarnessOptions = {}): Promise<ListeningHarness> {
  const harness = await createHarness(options);
  const url = await harness.app.listen({ port: 0, host: '127.0.0.1' });
  return { ...harness, url };
}

/** Asserts an Error record with the catalogue entry's code and status. */
export function assertErrorRecord(
  response: RawResponse | { status: number; body: string; headers?: unknown },
  entry: { code: number; status: number },
): void {
  assert.equal(response.status, entry.status, `status (body: ${response.body.slice(0, 300)})`);
  const body = JSON.parse(response.body) as { error: number };
  assert.ok(isCataloguedError(body), `not an Error record: ${response.body.slice(0, 300)}`);
  assert.equal(body.error, entry.code);
}
