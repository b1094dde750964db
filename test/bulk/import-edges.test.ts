/**
 * The edges of an import's text, on every backend: only the body's first byte order
 * mark is dropped (one starting a later line is the line's own text), a CSV header
 * naming a known column twice is refused, a charset other than UTF-8 is refused in
 * the import's own terms, and a wrong CSV header is answered as such (40007 naming
 * line 1) even when the rest of the body has not arrived yet.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { request, type IncomingMessage } from 'node:http';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { assertError } from '../support/assertions.js';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, type Harness } from '../support/harness.js';
import { listed } from '../support/pages.js';
import { listen } from '../client/servers.js';

const NDJSON = { 'content-type': 'application/x-ndjson' };
const CSV = { 'content-type': 'text/csv' };
const BOM = '\uFEFF';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const backend of testBackends())
  describe(`import edges [${backend.name}]`, () => {
    let h: Harness;
    beforeEach(async () => {
      h = await createHarness({ backend });
    });
    afterEach(async () => {
      await h.close();
    });

    const importBody = (payload: string, headers: Record<string, string> = NDJSON, query = '') =>
      h.request({
        method: 'POST',
        url: `/plants/import${query}`,
        headers: { ...headers, ...bearer(h.tokens.write) },
        payload,
      });
    const stored = async () => (await listed(h.store, { limit: 1000 })).map((p) => [p.id.toString(), p.name, p.tag]);

    it('drops the byte order mark starting the body, and keeps one starting a later line as text', async () => {
      const csv = `${BOM}name,id,tag\r\n${BOM}Fern,1,${BOM}t\r\nIvy,2,\r\n`;
      const response = await importBody(csv, CSV);
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual(await stored(), [
        ['1', `${BOM}Fern`, `${BOM}t`],
        ['2', 'Ivy', undefined],
      ]);
      // In NDJSON a mark before a later line's object is not JSON: that line is refused, not silently altered.
      const ndjson = await importBody(`${BOM}{"id":3,"name":"a"}\n${BOM}{"id":4,"name":"b"}\n`, NDJSON, '?mode=skip');
      assert.equal(ndjson.statusCode, 200, ndjson.body);
      const problems = ndjson.json().problems.map((p: { line: number; error: number }) => [p.line, p.error]);
      assert.deepEqual(problems, [[2, Errors.INVALID_JSON.code]]);
      assert.deepEqual(
        (await stored()).map(([id]) => id),
        ['1', '2', '3'],
      );
    });

    it('refuses a CSV header that names a known column twice, naming line 1', async () => {
      for (const header of ['id,name,name', 'id,name,tag,TAG', 'ID,id,name']) {
        const refused = await importBody(`${header}\r\n1,a,b,c\r\n`, CSV);
        const twice = /^nothing was imported: line 1: the CSV header names the column (id|name|tag) twice/;
        assertError(refused, Errors.IMPORT_INVALID, twice);
      }
      // Other columns are ignored, twice or not.
      const response = await importBody('id,note,name,note\r\n1,x,Fern,y\r\n', CSV);
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual(await stored(), [['1', 'Fern', undefined]]);
    });

    it("refuses a charset other than UTF-8 in the import's own format (415)", async () => {
      const latin1 = { 'content-type': 'text/csv; charset=iso-8859-1' };
      const csv = assertError(await importBody('id,name\r\n1,a\r\n', latin1), Errors.UNSUPPORTED_MEDIA_TYPE);
      assert.equal(csv.message, 'charset iso-8859-1 is not supported: send UTF-8 CSV');
      const utf16 = { 'content-type': 'application/x-ndjson; charset=utf-16' };
      const ndjson = assertError(await importBody('{"id":1,"name":"a"}', utf16), Errors.UNSUPPORTED_MEDIA_TYPE);
      assert.equal(ndjson.message, 'charset utf-16 is not supported: send UTF-8 NDJSON');
      assert.deepEqual(await stored(), []);
    });

    it('answers a wrong CSV header with 40007 naming line 1 while the rest of the body has not arrived yet', async () => {
      const url = await listen(h);
      const upload = request(`${url}/plants/import`, {
        method: 'POST',
        headers: { ...CSV, ...bearer(h.tokens.write) },
      });
      upload.on('error', () => {});
      const answered = once(upload, 'response') as Promise<[IncomingMessage]>;
      // The headers first, then the header line alone: the service reads it while the client has more to send.
      upload.flushHeaders();
      await sleep(100);
      upload.write('nope,name\r\n');
      const [response] = await answered;
      let text = '';
      for await (const chunk of response) text += String(chunk);
      upload.end('1,a\r\n');
      assert.equal(response.statusCode, 400, text);
      assert.deepEqual(JSON.parse(text), {
        error: Errors.IMPORT_INVALID.code,
        message:
          'nothing was imported: line 1: the CSV header must name the columns id,name,tag ' +
          "(tag optional, in any order); got 'nope,name'",
      });
      assert.deepEqual(await stored(), []);
    });
  });
