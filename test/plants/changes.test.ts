/**
 * Changing plants over HTTP, on every backend: PATCH (JSON Merge Patch) and PUT,
 * ETags on every answer that carries a plant, If-Match (412), If-None-Match (304 on
 * a read, create-only on POST), REQUIRE_PRECONDITIONS (428), the race of 50 PATCHes
 * with one ETag (and, on PostgreSQL, spread over two instances), and a change that
 * survives kill -9.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildCheckedApp } from '../support/checked-app.js';
import { issueToken } from '../../src/tokens/token-service.js';
import { assertError } from '../support/assertions.js';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, json, type Harness } from '../support/harness.js';
import { startServiceProcess } from '../support/service-process.js';
import { Errors } from '../../src/http/errors.js';
import { checkedFetch } from '../support/checked-fetch.js';

const MERGE_PATCH = { 'content-type': 'application/merge-patch+json' } as const;

for (const backend of testBackends())
  describe(`changing plants over HTTP [${backend.name}]`, () => {
    let h: Harness;
    before(async () => {
      h = await createHarness({ backend });
    });
    after(() => h.close());

    const write = () => ({ ...json, ...bearer(h.tokens.all) });
    const create = async (id: string, body: string) => {
      const response = await h.request({ method: 'POST', url: '/plants', headers: write(), payload: body });
      assert.equal(response.statusCode, 200, response.body);
      return String(response.headers.etag);
    };
    const get = (id: string, headers: Record<string, string> = {}) =>
      h.request({ method: 'GET', url: `/plants/${id}`, headers: { ...bearer(h.tokens.all), ...headers } });
    const patch = (id: string, body: string, headers: Record<string, string> = {}) =>
      h.request({
        method: 'PATCH',
        url: `/plants/${id}`,
        headers: { ...write(), ...MERGE_PATCH, ...headers },
        payload: body,
      });
    const put = (id: string, body: string, headers: Record<string, string> = {}) =>
      h.request({ method: 'PUT', url: `/plants/${id}`, headers: { ...write(), ...headers }, payload: body });
    const del = (id: string, headers: Record<string, string> = {}) =>
      h.request({ method: 'DELETE', url: `/plants/${id}`, headers: { ...bearer(h.tokens.all), ...headers } });

    describe('PATCH', () => {
      it('sets what it names and keeps the rest; "tag": null removes the tag; answers the plant with a new ETag', async () => {
        const etag = await create('1', '{"id": 1, "name": "Monstera", "tag": "houseplant"}');
        const renamed = await patch('1', '{"name": "Monstera deliciosa"}');
        assert.equal(renamed.statusCode, 200);
        assert.deepEqual(renamed.json(), { id: 1, name: 'Monstera deliciosa', tag: 'houseplant' });
        assert.notEqual(renamed.headers.etag, etag);
        const untagged = await patch('1', '{"tag": null, "color": "green"}', { 'content-type': 'application/json' });
        assert.deepEqual(untagged.json(), { id: 1, name: 'Monstera deliciosa' });
        const read = await get('1');
        assert.deepEqual(read.json(), { id: 1, name: 'Monstera deliciosa' });
        assert.equal(read.headers.etag, untagged.headers.etag);
      });

      it('an exact int64 id, above 2^53, in the path and in the body', async () => {
        await create('9223372036854775807', '{"id": 9223372036854775807, "name": "max"}');
        const response = await patch('9223372036854775807', '{"id": 9223372036854775807, "tag": "big"}');
        assert.equal(response.body, '{"id":9223372036854775807,"name":"max","tag":"big"}');
      });

      it("refuses a null name, an id other than the path's, bad text, and absent plants", async () => {
        await create('2', '{"id": 2, "name": "Aloe"}');
        assertError(await patch('2', '{"name": null}'), Errors.INVALID_FIELD, 'name must be a string');
        assertError(await patch('2', '{"id": 3}'), Errors.INVALID_FIELD, 'id must be the id in the path (2)');
        assertError(await patch('2', '{"name": ""}'), Errors.INVALID_FIELD, 'name must not be empty');
        assertError(
          await patch('2', `{"tag": "${'x'.repeat(101)}"}`),
          Errors.INVALID_FIELD,
          'tag must be at most 100 characters long',
        );
        assertError(await patch('2', '[]'), Errors.BODY_NOT_OBJECT);
        assertError(await patch('404', '{"name": "x"}'), Errors.PLANT_NOT_FOUND, 'no plant has id 404');
        assertError(
          await patch('2', '{"name": "x"}', { 'content-type': 'text/plain' }),
          Errors.UNSUPPORTED_MEDIA_TYPE,
          'application/merge-patch+json or application/json',
        );
        assert.deepEqual((await get('2')).json(), { id: 2, name: 'Aloe' });
      });

      it('a merge patch is PATCH only: POST refuses the media type', async () => {
        const response = await h.request({
          method: 'POST',
          url: '/plants',
          headers: { ...write(), ...MERGE_PATCH },
          payload: '{"id": 5, "name": "x"}',
        });
        assertError(response, Errors.UNSUPPORTED_MEDIA_TYPE);
      });

      it('a change that changes nothing answers 200 and keeps the ETag', async () => {
        const etag = await create('6', '{"id": 6, "name": "Same", "tag": "t"}');
        for (const body of ['{}', '{"name": "Same"}', '{"tag": "t"}', '{"name": "Same", "tag": "t"}']) {
          const response = await patch('6', body);
          assert.equal(response.statusCode, 200);
          assert.equal(response.headers.etag, etag, body);
        }
      });
    });

    describe('PUT', () => {
      it('replaces name and tag (a tag left out is removed); 404 when absent; the id must match', async () => {
        await create('10', '{"id": 10, "name": "Fern", "tag": "shade"}');
        const replaced = await put('10', '{"name": "Fern"}');
        assert.equal(replaced.statusCode, 200);
        assert.deepEqual(replaced.json(), { id: 10, name: 'Fern' });
        const tagged = await put('10', '{"id": 10, "name": "Fern", "tag": "sun"}');
        assert.deepEqual(tagged.json(), { id: 10, name: 'Fern', tag: 'sun' });
        assertError(await put('10', '{"tag": "sun"}'), Errors.INVALID_FIELD, 'name is required');
        assertError(
          await put('10', '{"id": 11, "name": "x"}'),
          Errors.INVALID_FIELD,
          'id must be the id in the path (10)',
        );
        assertError(await put('11', '{"name": "x"}'), Errors.PLANT_NOT_FOUND);
      });
    });

    describe('ETags and preconditions', () => {
      it('POST, GET, PATCH and PUT answer the same strong ETag for the same version; a real change makes a new one', async () => {
        const created = await create('20', '{"id": 20, "name": "A"}');
        assert.match(created, /^"[0-9]+"$/);
        assert.equal((await get('20')).headers.etag, created);
        const replay = await h.request({
          method: 'POST',
          url: '/plants',
          headers: write(),
          payload: '{"id": 20, "name": "A"}',
        });
        assert.equal(replay.headers.etag, created);
        const changed = await put('20', '{"name": "B"}');
        assert.notEqual(changed.headers.etag, created);
        assert.equal((await get('20')).headers.etag, changed.headers.etag);
      });

      it('If-Match: the current ETag (or one of a list, or *) lets the change through; another or a weak one gets 412, garbage 400, and nothing changes', async () => {
        const etag = await create('21', '{"id": 21, "name": "A"}');
        for (const stale of ['"999999999"', `W/${etag}`, '""']) {
          assertError(
            await patch('21', '{"name": "no"}', { 'if-match': stale }),
            Errors.PRECONDITION_FAILED,
            'plant 21 is at version',
          );
        }
        assertError(
          await patch('21', '{"name": "no"}', { 'if-match': 'garbage' }),
          Errors.INVALID_PARAMETER,
          'If-Match must be * or a comma-separated list of entity-tags',
        );
        assert.equal((await get('21')).headers.etag, etag);
        const next = await patch('21', '{"name": "B"}', { 'if-match': `"1", ${etag}` });
        assert.equal(next.statusCode, 200);
        assertError(await put('21', '{"name": "C"}', { 'if-match': etag }), Errors.PRECONDITION_FAILED);
        assert.equal((await put('21', '{"name": "C"}', { 'if-match': '*' })).statusCode, 200);
        assertError(await del('21', { 'if-match': etag }), Errors.PRECONDITION_FAILED);
        assert.equal((await get('21')).statusCode, 200);
        assert.equal((await del('21', { 'if-match': String((await get('21')).headers.etag) })).statusCode, 204);
        assertError(await del('21', { 'if-match': '*' }), Errors.PRECONDITION_FAILED, 'no plant has id 21');
        assertError(await patch('21', '{"name": "x"}', { 'if-match': '*' }), Errors.PRECONDITION_FAILED);
        assertError(await del('21'), Errors.PLANT_NOT_FOUND);
      });

      it('If-None-Match on a read: 304 with the ETag and no body while the plant is at that version (weak comparison)', async () => {
        const etag = await create('22', '{"id": 22, "name": "A"}');
        for (const header of [etag, `W/${etag}`, `"1", ${etag}`, '*']) {
          const response = await get('22', { 'if-none-match': header });
          assert.equal(response.statusCode, 304, header);
          assert.equal(response.body, '');
          assert.equal(response.headers.etag, etag);
        }
        const changed = await patch('22', '{"name": "B"}');
        const fresh = await get('22', { 'if-none-match': etag });
        assert.equal(fresh.statusCode, 200);
        assert.equal(fresh.headers.etag, changed.headers.etag);
      });

      it('If-None-Match: * on POST creates only: an existing id, even identical, is 412 and unchanged', async () => {
        const headers = { ...write(), 'if-none-match': '*' };
        const created = await h.request({
          method: 'POST',
          url: '/plants',
          headers,
          payload: '{"id": 23, "name": "A"}',
        });
        assert.equal(created.statusCode, 200);
        assert.deepEqual(created.json(), { name: 'A' });
        for (const body of ['{"id": 23, "name": "A"}', '{"id": 23, "name": "B"}']) {
          assertError(
            await h.request({ method: 'POST', url: '/plants', headers, payload: body }),
            Errors.PRECONDITION_FAILED,
            'a plant with id 23 exists',
          );
        }
        assert.deepEqual((await get('23')).json(), { id: 23, name: 'A' });
      });

      it('50 parallel PATCHes with one If-Match: exactly one 200, 49 412s', async () => {
        const etag = await create('24', '{"id": 24, "name": "race"}');
        const answers = await Promise.all(
          Array.from({ length: 50 }, (_, i) => patch('24', `{"name": "writer ${i}"}`, { 'if-match': etag })),
        );
        const statuses = answers.map((a) => a.statusCode);
        assert.equal(statuses.filter((s) => s === 200).length, 1, JSON.stringify(statuses));
        assert.equal(statuses.filter((s) => s === 412).length, 49);
        const winner = answers.find((a) => a.statusCode === 200);
        assert.equal((await get('24')).body, winner?.body);
      });
    });

    describe('REQUIRE_PRECONDITIONS=true', () => {
      let strict: Harness;
      before(async () => {
        strict = await createHarness({ backend, env: { REQUIRE_PRECONDITIONS: 'true' } });
      });
      after(() => strict.close());

      it('PATCH, PUT and DELETE without If-Match get 428 and change nothing; with it they work', async () => {
        const headers = { ...json, ...bearer(strict.tokens.all) };
        const created = await strict.request({
          method: 'POST',
          url: '/plants',
          headers,
          payload: '{"id": 1, "name": "A"}',
        });
        const etag = String(created.headers.etag);
        assertError(
          await strict.request({ method: 'PATCH', url: '/plants/1', headers, payload: '{"name": "B"}' }),
          Errors.PRECONDITION_REQUIRED,
          'PATCH needs If-Match',
        );
        assertError(
          await strict.request({ method: 'PUT', url: '/plants/1', headers, payload: '{"name": "B"}' }),
          Errors.PRECONDITION_REQUIRED,
          'PUT needs If-Match',
        );
        assertError(
          await strict.request({ method: 'DELETE', url: '/plants/1', headers: bearer(strict.tokens.all) }),
          Errors.PRECONDITION_REQUIRED,
          'DELETE needs If-Match',
        );
        const patched = await strict.request({
          method: 'PATCH',
          url: '/plants/1',
          headers: { ...headers, 'if-match': etag },
          payload: '{"name": "B"}',
        });
        assert.equal(patched.statusCode, 200);
        const removed = await strict.request({
          method: 'DELETE',
          url: '/plants/1',
          headers: { ...bearer(strict.tokens.all), 'if-match': '*' },
        });
        assert.equal(removed.statusCode, 204);
      });
    });
  });

describe('a change survives kill -9', () => {
  for (const backend of testBackends()) {
    it(
      `[${backend.name}] a PATCH answered 200 is there after the service is killed and restarted`,
      { timeout: 60_000 },
      async () => {
        const opened = await backend.open();
        const { secret } = await issueToken(opened.store.tokens, {
          name: 'w',
          scopes: ['plants:read', 'plants:write'],
        });
        try {
          const headers = { 'content-type': 'application/json', authorization: `Bearer ${secret}` };
          let service = await startServiceProcess({ DATABASE_URL: opened.databaseUrl });
          const created = await checkedFetch(`${service.url}/plants`, {
            method: 'POST',
            headers,
            body: '{"id": 7, "name": "before"}',
          });
          assert.equal(created.status, 200);
          const patched = await checkedFetch(`${service.url}/plants/7`, {
            method: 'PATCH',
            headers: { ...headers, 'if-match': String(created.headers.get('etag')) },
            body: '{"name": "after", "tag": "kept"}',
          });
          assert.equal(patched.status, 200);
          assert.equal(await service.stop('SIGKILL'), 'SIGKILL');
          service = await startServiceProcess({ DATABASE_URL: opened.databaseUrl });
          const read = await checkedFetch(`${service.url}/plants/7`, { headers });
          assert.equal(await read.text(), '{"id":7,"name":"after","tag":"kept"}');
          assert.equal(read.headers.get('etag'), patched.headers.get('etag'));
          await service.stop();
        } finally {
          await opened.cleanup();
        }
      },
    );
  }
});

describe(
  'the PATCH race spread over two instances [postgres]',
  { skip: !testBackends().some((b) => b.name === 'postgres') },
  () => {
    it('50 PATCHes with one If-Match, alternating between two apps on one database: exactly one 200, 49 412s', async () => {
      const backend = testBackends().find((b) => b.name === 'postgres');
      assert.ok(backend !== undefined);
      const first = await createHarness({ backend });
      const second = await buildCheckedApp(first.config);
      try {
        const headers = { ...json, ...bearer(first.tokens.all) };
        const created = await first.request({
          method: 'POST',
          url: '/plants',
          headers,
          payload: '{"id": 1, "name": "race"}',
        });
        const etag = String(created.headers.etag);
        const apps = [first.app, second];
        const answers = await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            (apps[i % 2] ?? first.app).inject({
              method: 'PATCH',
              url: '/plants/1',
              headers: { ...headers, 'if-match': etag },
              payload: `{"name": "writer ${i}"}`,
            }),
          ),
        );
        const statuses = answers.map((a) => a.statusCode);
        assert.equal(statuses.filter((s) => s === 200).length, 1, JSON.stringify(statuses));
        assert.equal(statuses.filter((s) => s === 412).length, 49);
      } finally {
        await second.close();
        await first.close();
      }
    });
  },
);
