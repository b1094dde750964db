/**
 * An import is not cut off by REQUEST_TIMEOUT_MS while its body keeps arriving at IMPORT_MIN_RATE: a slow but
 * steady upload several times longer than the timeout gets its 200; one that trickles below the rate gets a
 * 408 naming the rate, and stores nothing. Any other request is still bound by REQUEST_TIMEOUT_MS.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { assertErrorRecord, listeningHarness } from '../hostile/listening.js';
import { head, RawConnection } from '../hostile/raw-http.js';
import { testBackends } from '../support/backends.js';
import { bearer } from '../support/harness.js';

const REQUEST_TIMEOUT_MS = 1000;
const MIN_RATE = 1000;
/** What the steady upload keeps to on average, catching up after any delay of its own: well above MIN_RATE. */
const STEADY_RATE = 4000;
const env = {
  REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
  HEADERS_TIMEOUT_MS: '500',
  IMPORT_MIN_RATE: String(MIN_RATE),
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A line of about 60 bytes. */
const line = (id: number) => `{"id":${id},"name":"steady upload plant number ${String(id).padStart(6, '0')}"}\n`;

/** Starts a chunked import on a raw connection; each `send` is one chunk. */
async function startImport(url: string, token: string) {
  const connection = await RawConnection.open(url);
  await connection.write(
    head('POST', '/plants/import', {
      ...bearer(token),
      'content-type': 'application/x-ndjson',
      'transfer-encoding': 'chunked',
    }),
  );
  const send = (text: string) => connection.write(`${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`);
  return { connection, send, end: () => connection.write('0\r\n\r\n') };
}

for (const backend of testBackends())
  describe(`import upload time [${backend.name}]`, () => {
    it('a steady upload four times longer than REQUEST_TIMEOUT_MS is imported', async () => {
      const h = await listeningHarness({ backend, env });
      try {
        const upload = await startImport(h.url, h.tokens.write);
        let id = 1;
        let sent = 0;
        const started = Date.now();
        while (Date.now() - started < 4 * REQUEST_TIMEOUT_MS) {
          let chunk = '';
          while (sent + chunk.length < (STEADY_RATE * (Date.now() - started)) / 1000) chunk += line(id++);
          if (chunk !== '' && !(await upload.send(chunk)))
            assert.fail(`cut off: ${JSON.stringify(await upload.connection.response(100))}`);
          sent += chunk.length;
          await sleep(50);
        }
        await upload.end();
        const response = await upload.connection.response(10_000);
        assert.equal(response.status, 200, response.body);
        assert.equal((JSON.parse(response.body) as { created: number }).created, id - 1);
      } finally {
        await h.close();
      }
    });

    it('an upload below IMPORT_MIN_RATE gets 408 naming the rate, and stores nothing', async () => {
      const h = await listeningHarness({ backend, env });
      try {
        const upload = await startImport(h.url, h.tokens.write);
        const started = Date.now();
        let id = 1;
        // About 120 bytes/s.
        while (!upload.connection.isClosed && Date.now() - started < 10_000) {
          await upload.send(line(id++));
          await sleep(500);
        }
        const response = await upload.connection.response(1000);
        assertErrorRecord(response, Errors.REQUEST_TIMEOUT);
        assert.match(response.body, /at least 1000 bytes\/s \(IMPORT_MIN_RATE\)/);
        assert.ok(id > 2, 'it was given at least one window');
        const list = await fetch(`${h.url}/plants`, { headers: bearer(h.tokens.read) });
        assert.equal(await list.text(), '[]');
      } finally {
        await h.close();
      }
    });

    it('another route is still cut off after REQUEST_TIMEOUT_MS, however steady', async () => {
      const h = await listeningHarness({ backend, env });
      try {
        const connection = await RawConnection.open(h.url);
        const body = `{"id": 7, "name": "${'x'.repeat(150)}"}`;
        await connection.write(
          head('POST', '/plants', {
            ...bearer(h.tokens.write),
            'content-type': 'application/json',
            'content-length': String(body.length),
          }),
        );
        let sent = 0;
        const drip = setInterval(() => void connection.write(body.slice(sent, (sent += 4))), 50);
        try {
          assertErrorRecord(await connection.response(REQUEST_TIMEOUT_MS + 8000), Errors.REQUEST_TIMEOUT);
        } finally {
          clearInterval(drip);
        }
      } finally {
        await h.close();
      }
    });
  });
