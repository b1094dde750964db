/**
 * The change stream across instances on PostgreSQL: two services on one database,
 * each taking concurrent writes, and a reader that drops and resumes at random
 * points, alternating between the two: what it saw, put together, is the change log
 * exactly, in order, once each (the positions are commit order, so a change that
 * commits late is never skipped). And a change made on one instance reaches a stream
 * held on the other within a second.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildCheckedApp } from '../support/checked-app.js';
import { changeData } from '../../src/events/sse.js';
import { loadConfig } from '../../src/config/index.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/types.js';
import { issueToken } from '../../src/tokens/token-service.js';
import { postgresAvailable, postgresBackend, type OpenedTestStore } from '../support/backends.js';
import { discardedLog } from '../support/log-streams.js';
import { lastId, openStream, type SseMessage } from './sse-client.js';

const isChange = (message: SseMessage) => message.event?.startsWith('plant.') === true;

async function instance(databaseUrl: string, store: Store): Promise<{ app: FastifyInstance; url: string }> {
  const app = await buildCheckedApp(
    loadConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', EVENTS_HEARTBEAT_MS: '300' }),
    {
      store,
      logStream: discardedLog(),
    },
  );
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}

describe('the change stream across two instances on PostgreSQL', { skip: !postgresAvailable() }, () => {
  let opened: OpenedTestStore;
  let second: Store;
  let a: { app: FastifyInstance; url: string };
  let b: { app: FastifyInstance; url: string };
  let token: string;

  before(async () => {
    opened = await postgresBackend.open();
    second = await openStore(opened.databaseUrl);
    a = await instance(opened.databaseUrl, opened.store);
    b = await instance(opened.databaseUrl, second);
    token = (await issueToken(opened.store.tokens, { name: 'both', scopes: ['plants:read', 'plants:write'] })).secret;
  });
  after(async () => {
    await Promise.all([a?.app.close(), b?.app.close()]);
    await second?.close();
    await opened?.cleanup();
  });

  const call = (base: string, method: string, path: string, body?: string) =>
    fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body,
    });

  /** Creates, renames and deletes plants, several requests at once, on one instance. */
  async function writeOn(base: string, firstId: number, count: number): Promise<void> {
    const one = async (id: number) => {
      assert.equal((await call(base, 'POST', '/plants', `{"id":${id},"name":"plant ${id}"}`)).status, 200);
      if (id % 3 === 0) assert.equal((await call(base, 'PATCH', `/plants/${id}`, '{"tag":"renamed"}')).status, 200);
      if (id % 5 === 0) assert.equal((await call(base, 'DELETE', `/plants/${id}`)).status, 204);
    };
    for (let id = firstId; id < firstId + count; id += 8)
      await Promise.all(Array.from({ length: Math.min(8, firstId + count - id) }, (_, k) => one(id + k)));
  }

  it(
    'a reader resuming at random points on either instance sees the whole log, in order, once',
    { timeout: 120_000 },
    async () => {
      const writers = Promise.all([writeOn(a.url, 1, 200), writeOn(b.url, 100_001, 200)]);
      const seen: SseMessage[] = [];
      let resumeFrom = '0';
      let writing = true;
      void writers.finally(() => (writing = false));
      let hops = 0;
      for (;;) {
        const base = hops++ % 2 === 0 ? a.url : b.url;
        const stream = await openStream(`${base}/events`, token, { 'last-event-id': resumeFrom });
        assert.equal(stream.status, 200);
        const want = 1 + Math.floor(Math.random() * 30);
        await stream.waitFor(want, isChange, 1500).catch(() => undefined);
        stream.close();
        seen.push(...stream.messages.filter(isChange));
        resumeFrom = lastId(stream.messages) ?? resumeFrom;
        if (!writing) {
          const { last } = await opened.store.changes.bounds();
          if (BigInt(resumeFrom.replace(/^[0-9a-f]{16}-/, '')) >= last) break;
        }
      }
      await writers;
      const log = await opened.store.changes.after(0n, 10_000);
      const { history } = await opened.store.changes.bounds();
      // 400 creates, 66 + 67 tag changes (ids divisible by 3), 40 + 40 deletes (by 5).
      assert.equal(log.length, 400 + 133 + 80);
      assert.deepEqual(
        seen.map((m) => [m.id, m.event, m.data]),
        log.map((entry) => [`${history}-${entry.position}`, entry.type, changeData(entry)]),
      );
      assert.ok(hops >= 4, `the reader resumed ${hops} times`);
    },
  );

  it('a change made on one instance reaches a stream held on the other within a second', async () => {
    const stream = await openStream(`${a.url}/events`, token);
    // The stream has started (its hub is listening) once it has said so.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = performance.now();
    assert.equal((await call(b.url, 'POST', '/plants', '{"id":999999,"name":"from b"}')).status, 200);
    const [message] = await stream.waitFor(1, isChange, 1000);
    const took = performance.now() - started;
    stream.close();
    assert.equal(message?.data, '{"id":999999,"name":"from b"}');
    assert.ok(took < 1000, `took ${took} ms`);
  });
});
