import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { Errors, type CatalogueEntry } from '../../src/http/errors.js';

const CODES = new Set<number>(Object.values(Errors).map((e: CatalogueEntry) => e.code));

/** Asserts an Error record of the catalogue entry, with the status it belongs to. */
export function assertError(
  response: LightMyRequestResponse,
  entry: CatalogueEntry,
  messageIncludes?: string | RegExp,
): { error: number; message: string } {
  assert.equal(response.statusCode, entry.status, `status (body: ${response.body})`);
  assert.match(String(response.headers['content-type']), /^application\/json/);
  const body = response.json() as { error: number; message: string };
  assert.deepEqual(Object.keys(body).sort(), ['error', 'message']);
  assert.equal(body.error, entry.code);
  assert.equal(typeof body.message, 'string');
  assert.ok(body.message.length > 0);
  if (typeof messageIncludes === 'string')
    assert.ok(body.message.includes(messageIncludes), `message '${body.message}' should mention '${messageIncludes}'`);
  if (messageIncludes instanceof RegExp) assert.match(body.message, messageIncludes);
  return body;
}

/** True when a body is an Error record with a catalogued code. */
export function isCataloguedError(body: unknown): boolean {
  if (body === null || typeof body !== 'object') return false;
  const record = body as Record<string, unknown>;
  return Object.keys(record).length === 2 && typeof record.message === 'string' && CODES.has(record.error as number);
}

/**
 * A store result with the plants' versions left out, to compare contents: a version
 * is whatever the store's counter gave, and the tests about versions check them.
 */
export function unversioned<T>(value: T): T {
  if (Array.isArray(value)) return value.map(unversioned) as T;
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'version')
      .map(([key, v]) => [key, unversioned(v)]),
  ) as T;
}
