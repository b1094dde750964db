import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { Errors } from '../../src/http/errors.js';
import { SERVICE_VERSION } from '../../src/system/version.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/types.js';
import { assertError } from '../support/assertions.js';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, json, postPlant, type Harness } from '../support/harness.js';

for (const backend of testBackends())
  describe(`failure responses [${backend.name}]`, () => {
    let h: Harness;
    before(async () => {
      h = await createHarness({ backend });
    });
    after(() => h.close());

    const post = (headers: Record<string, string>, payload?: string | Buffer) =>
      h.request({
        method: 'POST',
        url: '/plants',
        headers: { ...bearer(h.tokens.write), ...headers },
        ...(payload === undefined ? {} : { payload }),
      });

    it('malformed JSON -> 400 INVALID_JSON', async () => {
      assertError(await post(json, '{"id": 1, "name": '), Errors.INVALID_JSON, /not valid JSON/);
    });

    it('invalid UTF-8 -> 400 INVALID_JSON', async () => {
      const bytes = Buffer.concat([Buffer.from('{"id": 1, "name": "'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
      assertError(await post(json, bytes), Errors.INVALID_JSON, /UTF-8/);
    });

    for (const body of ['[{"id": 1, "name": "a"}]', '"plant"', '42', 'null', 'true']) {
      it(`non-object body ${body} -> 400 BODY_NOT_OBJECT`, async () => {
        assertError(await post(json, body), Errors.BODY_NOT_OBJECT, 'must be a JSON object');
      });
    }

    it('empty body with Content-Type -> 400 BODY_REQUIRED', async () => {
      assertError(await post(json, ''), Errors.BODY_REQUIRED, 'required');
    });

    it('no body and no Content-Type -> 400 BODY_REQUIRED', async () => {
      assertError(await post({}), Errors.BODY_REQUIRED, 'required');
    });

    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/xml',
      'multipart/form-data; boundary=x',
    ]) {
      it(`Content-Type ${type} -> 415`, async () => {
        assertError(
          await post({ 'content-type': type }, '{"id": 1, "name": "a"}'),
          Errors.UNSUPPORTED_MEDIA_TYPE,
          'application/json',
        );
      });
    }

    it('a body without Content-Type -> 415', async () => {
      assertError(await post({}, '{"id": 1, "name": "a"}'), Errors.UNSUPPORTED_MEDIA_TYPE, 'no Content-Type');
    });

    it('JSON in a charset other than UTF-8 -> 415; charset=utf-8 is fine', async () => {
      assertError(
        await post({ 'content-type': 'application/json; charset=iso-8859-1' }, '{"id": 1, "name": "a"}'),
        Errors.UNSUPPORTED_MEDIA_TYPE,
        'charset',
      );
      assert.equal(
        (await post({ 'content-type': 'application/json; charset=UTF-8' }, '{"id": 7, "name": "a"}')).statusCode,
        200,
      );
    });

    it('a field of several types names them in words: "a string or null", not Ajv\'s "string,null"', async () => {
      assert.equal((await post(json, '{"id": 900, "name": "a"}')).statusCode, 200);
      const patched = await h.request({
        method: 'PATCH',
        url: '/plants/900',
        payload: '{"tag": 5}',
        headers: { ...bearer(h.tokens.write), 'content-type': 'application/merge-patch+json' },
      });
      assertError(patched, Errors.INVALID_FIELD);
      assert.equal(patched.json().message, 'tag must be a string or null');
    });

    it('a body over the documented limit -> 413', async () => {
      const body = JSON.stringify({ id: 1, name: 'a', padding: 'x'.repeat(h.config.bodyLimitBytes) });
      assertError(await post(json, body), Errors.BODY_TOO_LARGE, String(h.config.bodyLimitBytes));
    });

    it('an empty body is no body, whatever its Content-Type says (curl -d "" sends a form type); a non-empty one still gets 415', async () => {
      const admin = bearer(h.tokens.admin);
      for (const type of ['application/x-www-form-urlencoded', 'text/plain', 'application/octet-stream']) {
        const empty = { 'content-type': type, 'content-length': '0' };
        const retried = await h.request({
          method: 'POST',
          url: '/webhooks/whk_none/deliveries/dlv_none/retry',
          headers: { ...admin, ...empty },
        });
        assertError(retried, Errors.WEBHOOK_NOT_FOUND, 'whk_none');
        const rotated = await h.request({
          method: 'POST',
          url: '/webhooks/whk_none/rotate-secret',
          headers: { ...admin, ...empty },
        });
        assertError(rotated, Errors.WEBHOOK_NOT_FOUND, 'whk_none');
        const created = await h.request({
          method: 'POST',
          url: '/plants',
          headers: { ...bearer(h.tokens.write), ...empty },
        });
        assertError(created, Errors.BODY_REQUIRED);
        const form = await h.request({
          method: 'POST',
          url: '/webhooks/whk_none/rotate-secret',
          headers: { ...admin, 'content-type': type },
          payload: 'a=1',
        });
        assertError(form, Errors.UNSUPPORTED_MEDIA_TYPE, `got '${type}'`);
      }
    });

    it('an unknown route -> 404 ROUTE_NOT_FOUND', async () => {
      assertError(await h.request({ method: 'GET', url: '/plantz' }), Errors.ROUTE_NOT_FOUND, '/plantz');
      assertError(
        await h.request({ method: 'POST', url: '/nowhere', headers: json, payload: '{}' }),
        Errors.ROUTE_NOT_FOUND,
      );
      // The front door is a path: another method there is 405, not 404.
      assert.equal((await h.request({ method: 'POST', url: '/', headers: json, payload: '{}' })).statusCode, 405);
    });

    for (const [method, url, allow] of [
      ['PUT', '/plants', 'GET, HEAD, POST'],
      ['PATCH', '/plants', 'GET, HEAD, POST'],
      ['DELETE', '/plants', 'GET, HEAD, POST'],
      ['POST', '/plants/1', 'GET, HEAD, PUT, PATCH, DELETE'],
      ['OPTIONS', '/plants/1', 'GET, HEAD, PUT, PATCH, DELETE'],
      // Methods Fastify routes beyond the usual seven: 404 "no operation" would be wrong, the path exists.
      ['TRACE', '/plants', 'GET, HEAD, POST'],
      ['TRACE', '/plants/1', 'GET, HEAD, PUT, PATCH, DELETE'],
      ['QUERY', '/plants', 'GET, HEAD, POST'],
      ['QUERY', '/webhooks', 'GET, HEAD, POST'],
    ] as const) {
      it(`${method} ${url} -> 405 with Allow: ${allow}`, async () => {
        const response = await h.request({
          method,
          url,
          headers: { ...json, ...bearer(h.tokens.all) },
          payload: '{"id": 1, "name": "a"}',
        });
        assertError(response, Errors.METHOD_NOT_ALLOWED, method);
        assert.equal(response.headers.allow, allow);
      });
    }

    it('every response carries an X-Request-Id, echoing a well-formed one from the client', async () => {
      const own = await h.request({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'trace-123' } });
      assert.equal(own.headers['x-request-id'], 'trace-123');
      const generated = await h.request({
        method: 'GET',
        url: '/healthz',
        headers: { 'x-request-id': 'bad id with spaces' },
      });
      assert.match(String(generated.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    });

    it('a healthy service answers /healthz and /readyz', async () => {
      assert.deepEqual((await h.request({ method: 'GET', url: '/healthz' })).json(), { status: 'ok' });
      assert.deepEqual((await h.request({ method: 'GET', url: '/readyz' })).json(), {
        status: 'ok',
        version: SERVICE_VERSION,
      });
    });
  });

describe('internal faults', () => {
  it('an unexpected error -> 500 INTERNAL, with no stack or internals in the body, logged with its request id', async () => {
    const h = await createHarness({
      wrapStore: (store: Store) => ({
        ...store,
        plants: {
          ...store.plants,
          createPlant: async () => {
            throw new Error('secret internal detail at /srv/db');
          },
        },
      }),
    });
    try {
      const response = await postPlant(h, '{"id": 1, "name": "a"}');
      const body = assertError(response, Errors.INTERNAL, String(response.headers['x-request-id']));
      assert.ok(!response.body.includes('secret internal detail'));
      assert.ok(!/at .*\.(ts|js):\d+/.test(body.message));
      assert.ok(h.logs().includes('secret internal detail'), 'the fault is logged for operators');
    } finally {
      await h.close();
    }
  });

  // SQLite-specific by construction: a second connection holding the write lock is
  // how a SQLite store becomes unavailable. (The PostgreSQL outage test cuts the
  // network to the database instead; see test/postgres/.)
  it('a store that cannot write -> 503 STORE_UNAVAILABLE with Retry-After, and recovery afterwards [sqlite]', async () => {
    let impatient: SqliteStore | undefined;
    const h = await createHarness({
      wrapStore: (_store, databaseUrl) =>
        (impatient = SqliteStore.open({ path: databaseUrl.slice('sqlite:'.length), busyTimeoutMs: 50 })),
    });
    const locker = new Database(h.databaseUrl.slice('sqlite:'.length));
    try {
      locker.exec('BEGIN IMMEDIATE');
      locker.prepare('INSERT INTO plants (id, name, created_at) VALUES (999, ?, 0)').run('lock');
      const response = await postPlant(h, '{"id": 1, "name": "a"}');
      assertError(response, Errors.STORE_UNAVAILABLE);
      assert.equal(response.headers['retry-after'], '2');
      locker.exec('ROLLBACK');
      assert.equal((await postPlant(h, '{"id": 1, "name": "a"}')).statusCode, 200);
    } finally {
      locker.close();
      await impatient?.close();
      await h.close();
    }
  });
});
