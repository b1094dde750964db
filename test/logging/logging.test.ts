/**
 * Logs: JSON lines unless a person is watching (a terminal) or LOG_FORMAT says
 * otherwise; in either format, no bearer token or Authorization header.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { usePrettyLogs } from '../../src/logging.js';
import { bearer, createHarness, postPlant } from '../support/harness.js';

function fakeTerminal(): NodeJS.WritableStream {
  return Object.assign(new Writable({ write: (_chunk, _encoding, done) => done() }), { isTTY: true });
}

describe('log format', () => {
  it('auto: pretty on a terminal, JSON otherwise; LOG_FORMAT overrides', () => {
    assert.equal(usePrettyLogs('auto', fakeTerminal()), true);
    assert.equal(usePrettyLogs('auto', new Writable()), false);
    assert.equal(usePrettyLogs('json', fakeTerminal()), false);
    assert.equal(usePrettyLogs('pretty', new Writable()), true);
  });

  it('cuts tokens out of logged URLs, also when the URL percent-encodes them', async () => {
    const h = await createHarness();
    try {
      const secret = h.tokens.all.slice('pst_'.length);
      const encoded = [...secret].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
      for (const url of [
        `/plants/${h.tokens.all}`,
        `/x/pst%5F${secret}`,
        `/x/%70st_${secret}`,
        `/x/pst_${encoded}`,
        `/plants?access_token=${h.tokens.all}`,
        `/plants?access%5Ftoken=${secret}%26more`,
        `/plants?%61ccess_token=${secret}`,
      ]) {
        await h.request({ method: 'GET', url, headers: bearer(h.tokens.all) });
      }
      const logs = h.logs();
      assert.ok(!logs.includes(secret), 'a token in a URL reached the log');
      assert.ok(!logs.includes(encoded), 'a percent-encoded token in a URL reached the log');
      assert.match(logs, /pst_\[redacted\]/);
    } finally {
      await h.close();
    }
  });

  for (const format of ['json', 'pretty'] as const) {
    it(`LOG_FORMAT=${format}: one line per request, and never the token`, async () => {
      const h = await createHarness({ env: { LOG_FORMAT: format } });
      try {
        assert.equal((await postPlant(h, '{"id": 1, "name": "Fern"}')).statusCode, 200);
        await h.request({
          method: 'GET',
          url: '/plants/1',
          headers: { ...bearer(h.tokens.all), cookie: 'session=secret-cookie' },
        });
        await h.request({ method: 'GET', url: '/plants', headers: bearer('pst_not-a-real-token-but-still-secret') });
        const logs = h.logs();
        const lines = logs.trim().split('\n');
        if (format === 'json') {
          for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), line);
        } else {
          assert.throws(() => JSON.parse(lines[0] ?? ''));
          assert.match(logs, /INFO: request POST \/plants 200 [0-9.]+ms/);
          assert.match(logs, /INFO: request GET \/plants\/1 200 [0-9.]+ms/);
        }
        for (const secret of [
          h.tokens.write,
          h.tokens.all,
          'pst_not-a-real-token-but-still-secret',
          'secret-cookie',
          'Bearer',
        ]) {
          assert.ok(!logs.includes(secret), `logs contain ${secret}`);
        }
      } finally {
        await h.close();
      }
    });
  }
});
