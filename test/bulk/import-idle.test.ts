/**
 * CONNECTION_TIMEOUT_MS is the client's silence, not the service's work: an import
 * the store takes many timeouts to apply, and one whose body the service stops
 * reading meanwhile (backpressure), both get their 200, over a real socket.
 *
 * The test makes the store slow without a large import: a connection of its own
 * holds the store's write lock (SQLite: BEGIN IMMEDIATE; PostgreSQL: a SHARE lock
 * on plants, which every insert waits for) for many timeouts, so the service has
 * nothing to send or read for that long whatever the machine's speed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, type Harness } from '../support/harness.js';
import { listen } from '../client/servers.js';

const IDLE_MS = 400;
const HELD_MS = 6 * IDLE_MS;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function lines(from: number, count: number): string {
  let text = '';
  for (let id = from; id < from + count; id++) text += `{"id":${id},"name":"slow import ${id}","tag":"idle"}\n`;
  return text;
}

/** Holds the store's write lock until the returned function is called. */
async function holdWriteLock(h: Harness): Promise<() => Promise<void>> {
  if (h.backend === 'sqlite') {
    const db = new Database(h.databaseUrl.slice('sqlite:'.length));
    db.exec('BEGIN IMMEDIATE');
    return async () => {
      db.exec('COMMIT');
      db.close();
    };
  }
  const client = new pg.Client({ connectionString: h.databaseUrl });
  await client.connect();
  await client.query('BEGIN');
  await client.query('LOCK TABLE plants IN SHARE MODE');
  return async () => {
    await client.query('COMMIT');
    await client.end();
  };
}

/** The answer, or what the client met instead (the connection closed under it). */
async function postImport(url: string, token: string, body: string): Promise<{ status: number; body: string }> {
  try {
    const response = await fetch(`${url}/plants/import`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson', ...bearer(token) },
      body,
    });
    return { status: response.status, body: await response.text() };
  } catch (error) {
    return { status: 0, body: String(error instanceof Error && error.cause instanceof Error ? error.cause : error) };
  }
}

for (const backend of testBackends())
  describe(`an import slower than CONNECTION_TIMEOUT_MS [${backend.name}]`, () => {
    it('is answered: the idle timeout never runs while the service applies it or holds back its body', async () => {
      const h = await createHarness({ backend, env: { CONNECTION_TIMEOUT_MS: String(IDLE_MS) } });
      try {
        const url = await listen(h);
        const release = await holdWriteLock(h);
        let released = false;
        try {
          // Small: its body is all in at once, then the store keeps the service busy.
          const applied = postImport(url, h.tokens.write, lines(1, 10));
          await sleep(IDLE_MS);
          // Many chunks: the service stops reading it while its first chunks wait on the store.
          const heldBack = postImport(url, h.tokens.write, lines(1000, 20_000));
          await sleep(HELD_MS);
          await release();
          released = true;
          const answers = await Promise.all([applied, heldBack]);
          assert.deepEqual(
            answers.map((answer) => answer.status),
            [200, 200],
            answers.map((answer) => answer.body).join('\n'),
          );
          assert.deepEqual(
            answers.map((answer) => (JSON.parse(answer.body) as { created: number }).created),
            [10, 20_000],
          );
        } finally {
          if (!released) await release();
        }
        const count = await fetch(`${url}/plants?limit=1`, {
          headers: { ...bearer(h.tokens.read), prefer: 'count=exact' },
        });
        assert.equal(count.headers.get('x-total-count'), '20010');
      } finally {
        await h.close();
      }
    });
  });
