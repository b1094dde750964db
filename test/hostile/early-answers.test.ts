/**
 * An answer the service sends before a request's body has all arrived (413 for a
 * body over BODY_LIMIT) reaches clients that are still sending: the rest of the
 * body is read and discarded (lingering close), where closing at once made the
 * kernel reset the connection under a client still writing (EPIPE, ECONNRESET).
 *
 * The service runs as its own process: with client and server on one event loop
 * the client's writes never outrun the server's reads, and the reset hardly shows.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { issueToken } from '../../src/tokens/token-service.js';
import { isCataloguedError } from '../support/assertions.js';
import { testBackends } from '../support/backends.js';
import { startServiceProcess } from '../support/service-process.js';
import { listeningHarness } from './listening.js';

const CONCURRENT = 100;
const CHUNK = 64 * 1024;
/** A 2 MB create, far over BODY_LIMIT (64 KiB by default). */
const OVERSIZED = Buffer.from(`{"id":1,"name":"${'x'.repeat(2 * 1024 * 1024)}"}`);

/**
 * The body as a stream, so sent chunked: the service reads up to its limit and
 * answers while the client is still sending. (A declared Content-Length over the
 * limit is answered before any of the body is read; that reset shows more rarely.)
 */
function streamed(): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= OVERSIZED.length) return controller.close();
      controller.enqueue(OVERSIZED.subarray(offset, offset + CHUNK));
      offset += CHUNK;
    },
  });
}

/** The answer's status and Error code, or what the client met instead. */
async function postOversized(url: string, token: string): Promise<string> {
  try {
    const response = await fetch(`${url}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: streamed(),
      duplex: 'half',
    });
    const text = await response.text();
    const record = JSON.parse(text) as { error?: unknown };
    return isCataloguedError(record)
      ? `${response.status} ${String(record.error)}`
      : `${response.status} ${text.slice(0, 100)}`;
  } catch (error) {
    return String(error instanceof Error && error.cause instanceof Error ? error.cause.message : error);
  }
}

function tally(outcomes: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const outcome of outcomes) counts[outcome] = (counts[outcome] ?? 0) + 1;
  return counts;
}

for (const backend of testBackends())
  describe(`oversized bodies sent at once [${backend.name}]`, () => {
    it(`${CONCURRENT} concurrent 2 MB creates each read their 413 Error record`, { timeout: 120_000 }, async () => {
      const opened = await backend.open();
      try {
        const { secret } = await issueToken(opened.store.tokens, { name: 'writer', scopes: ['plants:write'] });
        const service = await startServiceProcess({ DATABASE_URL: opened.databaseUrl });
        try {
          const outcomes = await Promise.all(
            Array.from({ length: CONCURRENT }, () => postOversized(service.url, secret)),
          );
          assert.deepEqual(tally(outcomes), {
            [`${Errors.BODY_TOO_LARGE.status} ${Errors.BODY_TOO_LARGE.code}`]: CONCURRENT,
          });
        } finally {
          await service.stop();
        }
      } finally {
        await opened.cleanup();
      }
    });
  });

describe('lingering after an early answer is bounded', () => {
  for (const [what, env] of [
    ['LINGER_TIMEOUT_MS', { LINGER_TIMEOUT_MS: '500' }],
    ['LINGER_LIMIT', { LINGER_LIMIT: String(256 * 1024) }],
  ] as const) {
    it(`a client that keeps sending past ${what} has its connection closed`, async () => {
      const h = await listeningHarness({ env });
      try {
        const { port } = new URL(h.url);
        const socket = connect(Number(port), '127.0.0.1');
        socket.on('error', () => {}); // the cut is the point
        let answer = '';
        socket.on('data', (chunk) => (answer += String(chunk)));
        const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
        // Chunked: a declared length over LINGER_LIMIT would not be waited for at all.
        socket.write(
          `POST /plants HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${h.tokens.write}\r\ncontent-type: application/json\r\n` +
            'transfer-encoding: chunked\r\n\r\n',
        );
        // A 64 KiB chunk every 20 ms, for as long as the connection stays open (at most 1,000: over a minute).
        const chunk = `${CHUNK.toString(16)}\r\n${' '.repeat(CHUNK)}\r\n`;
        let chunks = 0;
        let open = true;
        void closed.then(() => (open = false));
        for (; open && chunks < 1000; chunks++) {
          socket.write(chunk);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await closed;
        assert.match(answer, /^HTTP\/1\.1 413 /, answer.slice(0, 200));
        assert.ok(chunks < 1000, `the connection stayed open for all ${chunks} chunks`);
      } finally {
        await h.close();
      }
    });
  }

  it('the early answer is the only one: REQUEST_TIMEOUT_MS passing while the body is discarded closes the connection without a 408', async () => {
    const h = await listeningHarness({
      env: { HEADERS_TIMEOUT_MS: '500', REQUEST_TIMEOUT_MS: '1000', LINGER_TIMEOUT_MS: '10000' },
    });
    try {
      const { port } = new URL(h.url);
      const socket = connect(Number(port), '127.0.0.1');
      socket.on('error', () => {});
      let answer = '';
      socket.on('data', (chunk) => (answer += String(chunk)));
      let open = true;
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      void closed.then(() => (open = false));
      socket.write(
        `POST /plants HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${h.tokens.write}\r\ncontent-type: application/json\r\n` +
          `transfer-encoding: chunked\r\n\r\n10000\r\n${' '.repeat(0x10000)}\r\n10000\r\n${' '.repeat(0x10000)}\r\n`,
      );
      // A chunk every 100 ms: the discarding goes on until the request timeout ends it (within 10 s).
      for (let i = 0; open && i < 100; i++) {
        socket.write(`400\r\n${' '.repeat(0x400)}\r\n`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await closed;
      assert.match(answer, /^HTTP\/1\.1 413 /, answer.slice(0, 200));
      assert.equal(answer.split('HTTP/1.1 ').length - 1, 1, answer);
    } finally {
      await h.close();
    }
  });
});
