/**
 * The database going away under a running service process, without touching the
 * shared PostgreSQL server: the service reaches it through a TCP proxy that the test
 * breaks in the ways real outages look (refused, reset, silent) and then heals.
 *
 * While it is down, requests fail fast with 503, an Error record and Retry-After;
 * /readyz says 503 and /healthz 200; the process stays up. When it is back, the
 * service recovers by itself, with every acknowledged plant intact.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { Errors } from '../../src/http/errors.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { issueToken } from '../../src/tokens/token-service.js';
import { postgresAvailable } from '../support/backends.js';
import { createTestSchema, postgresBehindProxy, type TestSchema } from '../support/postgres.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import type { ProxyMode, TcpProxy } from '../support/tcp-proxy.js';
import { call, createPlant, eventually, readPlant, type Reply } from './client.js';

const CONNECT_TIMEOUT_MS = 1000;
const STATEMENT_TIMEOUT_MS = 3000;
/**
 * Not a speed target: the longest a failing request may take before we call it a
 * hang. Every wait in the service is bounded by the connect timeout or by the
 * statement timeout plus one second, so this is far above what a correct service needs.
 */
const HANG_BOUND_MS = CONNECT_TIMEOUT_MS + STATEMENT_TIMEOUT_MS + 5000;

function assertUnavailable(reply: Reply, what: string): void {
  assert.equal(reply.status, 503, `${what}: ${reply.status} ${reply.body}`);
  const body = JSON.parse(reply.body) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body).sort(), ['error', 'message'], what);
  assert.equal(body.error, Errors.STORE_UNAVAILABLE.code, what);
  assert.match(String(reply.headers.get('retry-after')), /^[1-9]\d*$/, `${what}: Retry-After`);
}

async function timed(request: Promise<Reply>): Promise<Reply> {
  const started = Date.now();
  const reply = await request;
  assert.ok(Date.now() - started < HANG_BOUND_MS, `took ${Date.now() - started} ms`);
  return reply;
}

describe('the database going away and coming back', { skip: !postgresAvailable() }, () => {
  let schema: TestSchema;
  let proxy: TcpProxy;
  let service: ServiceProcess;
  let token: string;
  let nextId = 1;

  before(async () => {
    schema = await createTestSchema();
    const store = await PostgresStore.open({ url: schema.url, poolSize: 1 });
    token = (await issueToken(store.tokens, { name: 'client', scopes: ['plants:read', 'plants:write'] })).secret;
    await store.close();
    const proxied = await postgresBehindProxy(schema.url);
    proxy = proxied.proxy;
    service = await startServiceProcess({
      DATABASE_URL: proxied.url,
      DATABASE_POOL_SIZE: '4',
      DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
      DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
    });
  });
  after(async () => {
    await service?.stop();
    await proxy?.close();
    await schema?.drop();
  });

  const create = (id: number) => createPlant(service.url, token, `{"id": ${id}, "name": "plant ${id}"}`);

  async function assertWorking(): Promise<number> {
    const id = nextId++;
    assert.equal((await call(`${service.url}/readyz`)).status, 200);
    const created = await create(id);
    assert.equal(created.status, 200, created.body);
    return id;
  }

  async function assertRecovers(acknowledged: readonly number[]): Promise<void> {
    await proxy.setMode('open');
    await eventually('/readyz answers 200 again', async () => (await call(`${service.url}/readyz`)).status === 200);
    for (const id of acknowledged) {
      assert.equal((await readPlant(service.url, token, String(id))).body, `{"id":${id},"name":"plant ${id}"}`);
    }
    await assertWorking();
  }

  const outages: readonly [ProxyMode, string][] = [
    ['refuse', 'the server is down (connections refused)'],
    ['reset', 'the server resets every connection (crash or restart)'],
    ['blackhole', 'the network goes silent (only timeouts can tell)'],
  ];
  for (const [mode, label] of outages) {
    it(`when ${label}: 503 + Retry-After fast, /readyz 503, /healthz 200, then recovers by itself`, async () => {
      const before = [await assertWorking(), await assertWorking()];
      await proxy.setMode(mode);

      assertUnavailable(await timed(create(nextId++)), 'create');
      assertUnavailable(await timed(readPlant(service.url, token, String(before[0]))), 'read');
      assertUnavailable(await timed(call(`${service.url}/plants`, { token })), 'list');
      assertUnavailable(await timed(call(`${service.url}/readyz`)), '/readyz');
      assert.equal((await call(`${service.url}/healthz`)).status, 200);
      assert.equal(service.child.exitCode, null, 'the process is still running');

      await assertRecovers(before);
    });
  }

  it('a request in flight when the connection drops gets 503, and its create can be retried safely', async () => {
    const acknowledged = await assertWorking();
    // Hold the request inside the database: it waits on a table lock taken directly (not through the proxy).
    const locker = new pg.Client({ connectionString: schema.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE plants IN ACCESS EXCLUSIVE MODE');
      const id = nextId++;
      const inFlight = timed(create(id));
      await sleep(300);
      await proxy.setMode('reset');
      assertUnavailable(await inFlight, 'in-flight create');
      await locker.query('ROLLBACK');
      await assertRecovers([acknowledged]);
      // The client cannot know whether a create that got 503 committed; retrying it is safe either way.
      const retried = await create(id);
      assert.equal(retried.status, 200, retried.body);
      assert.equal((await create(id)).status, 200);
    } finally {
      await locker.end().catch(() => {});
    }
  });

  it('a statement stuck behind a lock is cancelled by the statement timeout: 503, not a hung request', async () => {
    await assertWorking();
    const locker = new pg.Client({ connectionString: schema.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE plants IN ACCESS EXCLUSIVE MODE');
      assertUnavailable(await timed(create(nextId++)), 'create behind a lock');
      // The database itself is fine meanwhile, so the instance stays ready.
      assert.equal((await call(`${service.url}/readyz`)).status, 200);
    } finally {
      await locker.query('ROLLBACK').catch(() => {});
      await locker.end().catch(() => {});
    }
    await assertWorking();
  });

  it('the process never crashed and logged outages as warnings, not as unexpected errors', () => {
    assert.equal(service.child.exitCode, null);
    assert.equal(service.child.signalCode, null);
    const output = service.output();
    assert.match(output, /store unavailable/);
    assert.doesNotMatch(output, /unexpected error|uncaught|unhandled/i);
  });
});
