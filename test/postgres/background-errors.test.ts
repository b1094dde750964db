/**
 * The store plugin opens the store itself and tells the app's log about what breaks
 * in the background: an idle pool connection that the network drops. Before the
 * store was a plugin, the PostgreSQL store's background-error callback defaulted to
 * a no-op and nothing was logged.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { buildCheckedApp } from '../support/checked-app.js';
import { loadConfig } from '../../src/config/index.js';
import { postgresAvailable } from '../support/backends.js';
import { createTestSchema, postgresBehindProxy, type TestSchema } from '../support/postgres.js';
import type { TcpProxy } from '../support/tcp-proxy.js';

describe('PostgreSQL background errors reach the log', { skip: !postgresAvailable() }, () => {
  let schema: TestSchema;
  let proxy: TcpProxy;
  let url: string;
  before(async () => {
    schema = await createTestSchema();
    ({ proxy, url } = await postgresBehindProxy(schema.url));
  });
  after(async () => {
    await proxy?.close();
    await schema?.drop();
  });

  it('an idle connection reset by the network is logged as an error, and the next request still answers', async () => {
    let logs = '';
    const logStream = new Writable({
      write(chunk, _encoding, done) {
        logs += String(chunk);
        done();
      },
    });
    const app = await buildCheckedApp(loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'info', LOG_FORMAT: 'json' }), {
      logStream,
    });
    try {
      assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
      assert.ok(proxy.connectionCount > 0, 'the pool holds an idle connection');
      await proxy.setMode('reset');
      await proxy.setMode('open');
      const deadline = Date.now() + 5000;
      while (!logs.includes('a database connection failed while idle') && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      const line = logs.split('\n').find((entry) => entry.includes('a database connection failed while idle'));
      assert.ok(line !== undefined, `nothing logged; the log was:\n${logs}`);
      assert.equal(JSON.parse(line).level, 50);
      assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
    } finally {
      await app.close();
    }
  });
});
