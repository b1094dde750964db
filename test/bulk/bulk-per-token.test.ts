/**
 * BULK_MAX_PER_TOKEN: one token runs at most that many imports and exports at once
 * on an instance; one more gets 429 TOO_MANY_BULK, other tokens go on, and the
 * place comes back when the import or export ends, however it ends.
 */
import assert from 'node:assert/strict';
import { request, type ClientRequest } from 'node:http';
import { describe, it } from 'node:test';
import { listen } from '../client/servers.js';
import { testBackends } from '../support/backends.js';
import { createHarness } from '../support/harness.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const lines = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => `{"id":${from + i},"name":"plant ${from + i}"}\n`).join('');

/** An import whose upload has begun and goes on: it holds its place until the upload ends. */
function openUpload(url: string, token: string): ClientRequest {
  const upload = request(`${url}/plants/import`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson', authorization: `Bearer ${token}` },
  });
  upload.on('error', () => {}); // cutting it off is part of the test
  upload.write(lines(500_000, 2000));
  return upload;
}

/** An export dropped as soon as its headers arrive. */
function droppedExport(url: string, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/plants/export`, { headers: { authorization: `Bearer ${token}` } }, (response) => {
      req.destroy();
      resolve(response.statusCode ?? 0);
    });
    req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
    req.end();
  });
}

for (const backend of testBackends())
  describe(`imports and exports per token [${backend.name}]`, () => {
    it(
      'holds a token to BULK_MAX_PER_TOKEN at once, and gives the place back when one ends',
      { timeout: 60_000 },
      async () => {
        const h = await createHarness({ backend, env: { BULK_MAX_PER_TOKEN: '1' } });
        let upload: ClientRequest | undefined;
        try {
          const url = await listen(h);
          const call = (method: string, path: string, token: string, body?: string) =>
            fetch(`${url}${path}`, {
              method,
              headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
              ...(body === undefined ? {} : { body }),
            });
          assert.equal((await call('POST', '/plants/import', h.tokens.all, lines(1, 3000))).status, 200);

          upload = openUpload(url, h.tokens.all);
          await sleep(500);
          for (const [method, path, body] of [
            ['GET', '/plants/export', undefined],
            ['POST', '/plants/import', lines(200_000, 3)],
          ] as const) {
            const refused = await call(method, path, h.tokens.all, body);
            assert.equal(refused.status, 429, `${method} ${path}`);
            assert.deepEqual(await refused.json(), {
              error: 42903,
              message:
                'this token runs 1 imports and exports, the most one token may run at once; retry when one has ended',
            });
          }
          // Another token is not held back by this one; HEAD reads no plant and takes no place.
          const other = await call('GET', '/plants/export', h.tokens.read);
          assert.equal(other.status, 200);
          assert.equal((await other.text()).split('\n').length - 1, 3000);
          assert.equal((await call('HEAD', '/plants/export', h.tokens.all)).status, 200);

          // An upload cut off gives its place back, and so does every export, read to its end or dropped, and a refused
          // import.
          upload.destroy();
          await sleep(300);
          for (let round = 0; round < 3; round++) {
            const whole = await call('GET', '/plants/export', h.tokens.all);
            assert.equal(whole.status, 200);
            assert.equal((await whole.text()).split('\n').length - 1, 3000);
            assert.equal(await droppedExport(url, h.tokens.all), 200);
            await sleep(100);
            assert.equal(
              (await call('POST', '/plants/import', h.tokens.all, '{"id":1,"name":"another name"}\n')).status,
              409,
            );
          }
          const imported = await call('POST', '/plants/import', h.tokens.all, lines(200_000, 3));
          assert.equal(imported.status, 200);
          assert.equal(((await imported.json()) as { created: number }).created, 3);
        } finally {
          upload?.destroy();
          await h.close();
        }
      },
    );
  });
