/**
 * POST /plants/import and GET /plants/export over HTTP on every backend: create's
 * rules line by line, all or nothing (400 and 409 naming lines), skip mode, CSV
 * quoting, int64 extremes, the round trip export -> import into an empty store,
 * the plant.created events of an import, and one snapshot per export.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { assertError } from '../support/assertions.js';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, type Harness } from '../support/harness.js';
import { listed } from '../support/pages.js';
import { selectColumn } from '../webhooks/database.js';
import { failure } from '../../src/http/errors.js';

const NDJSON = { 'content-type': 'application/x-ndjson' };
const CSV = { 'content-type': 'text/csv' };
const MIN = '-9223372036854775808';
const MAX = '9223372036854775807';

const ndjson = (...lines: string[]) => lines.join('\n');

for (const backend of testBackends())
  describe(`import and export [${backend.name}]`, () => {
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
    const exportText = async (query = '', headers: Record<string, string> = {}) => {
      const response = await h.request({
        method: 'GET',
        url: `/plants/export${query}`,
        headers: { ...headers, ...bearer(h.tokens.read) },
      });
      assert.equal(response.statusCode, 200, response.body);
      return response;
    };
    const all = (harness: Harness) => listed(harness.store, { limit: 1000 });
    const stored = async () => (await all(h)).map((p) => ({ id: p.id.toString(), name: p.name, tag: p.tag }));

    it('creates every line, keeps every digit of int64 ids, and counts replays as unchanged', async () => {
      const first = await importBody(
        ndjson(
          `{"id":${MIN},"name":"min"}`,
          '',
          `{"id":${MAX},"name":"max","tag":"edge"}`,
          '{"id":1,"name":"one","extra":true}',
          '',
        ),
      );
      assert.equal(first.statusCode, 200, first.body);
      assert.deepEqual(first.json(), { created: 3, unchanged: 0, skipped: 0, problems: [] });
      const again = await importBody(
        ndjson(`{"id":${MAX},"name":"max","tag":"edge"}`, '{"id":2,"name":"two"}', '{"id":2,"name":"two"}'),
      );
      assert.deepEqual(again.json(), { created: 1, unchanged: 2, skipped: 0, problems: [] });
      assert.deepEqual(await stored(), [
        { id: MIN, name: 'min', tag: undefined },
        { id: '1', name: 'one', tag: undefined },
        { id: '2', name: 'two', tag: undefined },
        { id: MAX, name: 'max', tag: 'edge' },
      ]);
    });

    it('stores nothing when a line is invalid, naming the lines (400)', async () => {
      const response = await importBody(
        ndjson('{"id":1,"name":"ok"}', '{"id":2}', 'not json', '{"id":"3","name":"x"}', '[1]'),
      );
      assertError(
        response,
        Errors.IMPORT_INVALID,
        /line 2: name is required; line 3: request body is not valid JSON.*; line 4: id must be an integer.*; line 5: request body must be a JSON object/,
      );
      assert.deepEqual(await stored(), []);
    });

    it('stores nothing when a line conflicts with a stored plant or an earlier line (409)', async () => {
      assert.equal((await importBody('{"id":5,"name":"five"}')).statusCode, 200);
      const response = await importBody(
        ndjson('{"id":6,"name":"six"}', '{"id":5,"name":"FIVE"}', '{"id":6,"name":"SIX"}'),
      );
      assertError(
        response,
        Errors.IMPORT_CONFLICT,
        `nothing was imported: line 2: ${failure('PLANT_CONFLICT', ['5']).message}; line 3: ${failure('PLANT_CONFLICT', ['6']).message}`,
      );
      assert.deepEqual(await stored(), [{ id: '5', name: 'five', tag: undefined }]);
    });

    it('in skip mode stores the valid lines and reports the others by line', async () => {
      assert.equal((await importBody('{"id":5,"name":"five"}')).statusCode, 200);
      const response = await importBody(
        ndjson('{"id":5,"name":"FIVE"}', '{"id":7,"name":""}', '{"id":8,"name":"eight"}', '{"id":5,"name":"five"}'),
        NDJSON,
        '?mode=skip',
      );
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual(response.json(), {
        created: 1,
        unchanged: 1,
        skipped: 2,
        problems: [
          {
            line: 1,
            error: Errors.PLANT_CONFLICT.code,
            message: failure('PLANT_CONFLICT', ['5']).message,
          },
          { line: 2, error: Errors.INVALID_FIELD.code, message: 'name must not be empty' },
        ],
      });
      assert.deepEqual(
        (await stored()).map((p) => p.id),
        ['5', '8'],
      );
    });

    it('reads CSV with quoting, any column order, extra columns and empty tags', async () => {
      const csv = ['tag,Name,id,note', 'outdoor,"Rose, ""Peace""",1,x', ',Fern,2,', '"",Ivy,3,'].join('\r\n');
      const response = await importBody(csv, CSV);
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual(await stored(), [
        { id: '1', name: 'Rose, "Peace"', tag: 'outdoor' },
        { id: '2', name: 'Fern', tag: undefined },
        { id: '3', name: 'Ivy', tag: undefined },
      ]);
      const exported = await exportText('?format=csv');
      assert.equal(exported.body, 'id,name,tag\r\n1,"Rose, ""Peace""",outdoor\r\n2,Fern,\r\n3,Ivy,\r\n');
    });

    it('refuses CSV without a usable header and records that are not CSV', async () => {
      assertError(
        await importBody('name,tag\r\nx,y', CSV),
        Errors.IMPORT_INVALID,
        'line 1: the CSV header must name the columns id,name,tag',
      );
      const bad = await importBody('id,name\n1,"open\n2,a"b\n3', CSV, '?mode=skip');
      assert.equal(bad.statusCode, 200, bad.body);
      assert.deepEqual(
        bad.json().problems.map((p: { line: number; message: string }) => [p.line, p.message.slice(0, 30)]),
        [
          [2, 'the record has a quoted field '],
          [3, 'the record has a double quote '],
          [4, 'the record has 1 fields, fewer'],
        ],
      );
    });

    it('refuses other media types and compressed bodies (415), and needs plants:write', async () => {
      assertError(
        await importBody('{"id":1,"name":"a"}', { 'content-type': 'application/json' }),
        Errors.UNSUPPORTED_MEDIA_TYPE,
        'application/x-ndjson or text/csv',
      );
      assertError(
        await importBody('x', { ...NDJSON, 'content-encoding': 'gzip' }),
        Errors.UNSUPPORTED_MEDIA_TYPE,
        'gzip',
      );
      const readOnly = await h.request({
        method: 'POST',
        url: '/plants/import',
        headers: { ...NDJSON, ...bearer(h.tokens.read) },
        payload: '{"id":1,"name":"a"}',
      });
      assertError(readOnly, Errors.INSUFFICIENT_SCOPE);
      assert.deepEqual(await stored(), []);
    });

    it('refuses a body over IMPORT_LIMIT (413) and stores nothing', async () => {
      await h.close();
      h = await createHarness({ backend, env: { IMPORT_LIMIT: '2048' } });
      const lines = Array.from({ length: 200 }, (_, i) => `{"id":${i},"name":"plant ${i}"}`);
      assertError(await importBody(ndjson(...lines)), Errors.BODY_TOO_LARGE, '2048');
      assert.deepEqual(await stored(), []);
    });

    it('exports NDJSON in id order, filtered like the list, and imports it back into an empty store identically', async () => {
      const plants = [
        `{"id":${MAX},"name":"Zébra \\"plant\\"","tag":"a,b"}`,
        `{"id":${MIN},"name":"Monstera deliciosa","tag":"house"}`,
        '{"id":0,"name":"Ficus, lyrata"}',
      ];
      assert.equal((await importBody(ndjson(...plants))).statusCode, 200);
      const whole = await exportText();
      assert.equal(whole.headers['content-type'], 'application/x-ndjson');
      assert.equal(
        whole.body,
        `{"id":${MIN},"name":"Monstera deliciosa","tag":"house"}\n{"id":0,"name":"Ficus, lyrata"}\n{"id":${MAX},"name":"Zébra \\"plant\\"","tag":"a,b"}\n`,
      );
      assert.equal((await exportText('?q=monst')).body, `{"id":${MIN},"name":"Monstera deliciosa","tag":"house"}\n`);
      assert.equal((await exportText('?tag=a,b')).body.split('\n').length, 2);
      const csv = await exportText('', { accept: 'text/csv' });
      assert.match(String(csv.headers['content-type']), /^text\/csv/);

      for (const [body, headers] of [
        [whole.body, NDJSON],
        [csv.body, CSV],
      ] as const) {
        const copy = await createHarness({ backend });
        try {
          const response = await copy.request({
            method: 'POST',
            url: '/plants/import',
            headers: { ...headers, ...bearer(copy.tokens.write) },
            payload: body,
          });
          assert.deepEqual(response.json(), { created: 3, unchanged: 0, skipped: 0, problems: [] });
          assert.deepEqual(
            (await all(copy)).map((p) => [p.id, p.name, p.tag]),
            (await all(h)).map((p) => [p.id, p.name, p.tag]),
          );
        } finally {
          await copy.close();
        }
      }
    });

    it("answers HEAD with the export's headers, without reading the plants", async () => {
      assert.equal((await importBody(ndjson('{"id":1,"name":"one"}', '{"id":2,"name":"two"}'))).statusCode, 200);
      const plants = h.store.plants;
      const exportPlants = plants.exportPlants.bind(plants);
      let exports = 0;
      plants.exportPlants = (filter) => {
        exports += 1;
        return exportPlants(filter);
      };
      const head = await h.request({
        method: 'HEAD',
        url: '/plants/export?format=csv',
        headers: bearer(h.tokens.read),
      });
      assert.equal(head.statusCode, 200);
      assert.match(String(head.headers['content-type']), /^text\/csv/);
      assert.equal(head.headers['content-disposition'], 'attachment; filename="plants.csv"');
      assert.equal(head.body, '');
      assert.equal(exports, 0, 'HEAD opened an export');
      assert.equal((await exportText()).body.split('\n').length, 3);
      assert.equal(exports, 1);
    });

    it('writes a plant.created event for every plant it creates, and none for unchanged lines', async () => {
      await h.store.webhooks.insertSubscription({
        id: 'whk_import',
        url: 'https://example.com/hook',
        eventTypes: ['plant.created'],
        secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        createdAt: new Date(),
      });
      assert.equal((await importBody('{"id":1,"name":"one"}')).statusCode, 200);
      assert.equal(
        (
          await importBody(
            ndjson('{"id":1,"name":"one"}', '{"id":2,"name":"two"}', '{"id":3,"name":"three","tag":"t"}'),
          )
        ).statusCode,
        200,
      );
      // Read from the outbox itself: the app's dispatcher may be delivering them already.
      const payloads = (await selectColumn(
        h.databaseUrl,
        "SELECT payload FROM webhook_events WHERE type = 'plant.created' ORDER BY payload",
      )) as string[];
      assert.deepEqual(payloads, [
        '{"id":1,"name":"one"}',
        '{"id":2,"name":"two"}',
        '{"id":3,"name":"three","tag":"t"}',
      ]);
    });

    it('exports one snapshot: plants created while it streams are not in it', async () => {
      const lines = Array.from({ length: 5000 }, (_, i) => `{"id":${i * 2},"name":"plant ${i}"}`);
      assert.equal((await importBody(ndjson(...lines))).statusCode, 200);
      const chunks = h.store.plants.exportPlants({})[Symbol.asyncIterator]();
      const first = await chunks.next();
      // Written after the snapshot began: odd ids all through the range, and a delete of the last even id.
      await Promise.all([1, 4001, 9999].map((id) => h.store.plants.createPlant({ id: BigInt(id), name: 'late' })));
      await h.store.plants.deletePlant(9998n);
      let ids: bigint[] = first.done === true ? [] : first.value.map((p) => p.id);
      for (let next = await chunks.next(); next.done !== true; next = await chunks.next())
        ids = ids.concat(next.value.map((p) => p.id));
      assert.equal(ids.length, 5000);
      assert.ok(ids.every((id) => id % 2n === 0n));
      assert.equal(ids.at(-1), 9998n);
    });
  });
