/**
 * GET /events over real sockets, on every store: messages for every change, in
 * order; resuming with Last-Event-ID or ?after= without gap or repeat, also while
 * another client writes; filters; positions refused before the stream starts
 * (expired, unknown, malformed); the slow-reader cut-off; the per-token limit; the
 * end of a stream whose token is revoked or expires while it runs; and the end of
 * every stream when the service shuts down.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import type { Store } from '../../src/store/types.js';
import { issueToken } from '../../src/tokens/token-service.js';
import { listen } from '../client/servers.js';
import { testBackends } from '../support/backends.js';
import { createHarness, type Harness } from '../support/harness.js';
import { lastId, openStream, type SseMessage } from './sse-client.js';
import { WAIT_BOUND_MS, waitFor } from '../support/wait.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const isChange = (message: SseMessage) => message.event?.startsWith('plant.') === true;
/** The position an event id names (`<history>-<position>`). */
const at = (id: string | undefined) => id?.replace(/^[0-9a-f]{16}-/, '');
/** The event id of `position` in the store's current history. */
const idIn = async (store: Store, position: number | string) => `${(await store.changes.bounds()).history}-${position}`;

for (const backend of testBackends())
  describe(`GET /events [${backend.name}]`, () => {
    let h: Harness;
    let url: string;
    const env: Record<string, string> = {};
    beforeEach(async () => {
      h = await createHarness({ backend, env: { EVENTS_HEARTBEAT_MS: '200', ...env } });
      url = await listen(h);
    });
    afterEach(async () => {
      await h.close();
    });

    const write = (method: string, path: string, body?: string, type = 'application/json') =>
      fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${h.tokens.write}`, ...(body === undefined ? {} : { 'content-type': type }) },
        body,
      });
    const createMany = async (from: number, count: number) => {
      let body = '';
      for (let id = from; id < from + count; id++)
        body += `{"id":${id},"name":"plant ${id}","tag":"${id % 2 === 0 ? 'even' : 'odd'}"}\n`;
      const response = await write('POST', '/plants/import', body, 'application/x-ndjson');
      assert.equal(response.status, 200, await response.text());
    };

    it('streams every change from now on, in order, with the payloads webhooks carry', async () => {
      await createMany(1, 3); // before the stream: not in it
      const stream = await openStream(`${url}/events`, h.tokens.read);
      assert.equal(stream.status, 200);
      assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
      await write('POST', '/plants', '{"id":9223372036854775807,"name":"max","tag":"t"}');
      await write('PATCH', '/plants/9223372036854775807', '{"tag":null}');
      await write('DELETE', '/plants/9223372036854775807');
      const messages = await stream.waitFor(3, isChange);
      assert.deepEqual(
        messages.map((m) => [at(m.id), m.event, m.data]),
        [
          ['4', 'plant.created', '{"id":9223372036854775807,"name":"max","tag":"t"}'],
          ['5', 'plant.updated', '{"id":9223372036854775807,"name":"max","previousTag":"t"}'],
          ['6', 'plant.deleted', '{"id":9223372036854775807}'],
        ],
      );
      stream.close();
    });

    it('resumes right after Last-Event-ID or ?after=, with no gap and no repeat', async () => {
      await createMany(1, 30);
      const byHeader = await openStream(`${url}/events`, h.tokens.read, { 'last-event-id': await idIn(h.store, 10) });
      const fromHeader = await byHeader.waitFor(20, isChange);
      assert.deepEqual(
        fromHeader.map((m) => m.id),
        await Promise.all(Array.from({ length: 20 }, (_, i) => idIn(h.store, i + 11))),
      );
      // EventSource keeps its URL (?after=) and adds the newer Last-Event-ID: the header wins.
      const both = await openStream(`${url}/events?after=0`, h.tokens.read, {
        'last-event-id': await idIn(h.store, 25),
      });
      assert.deepEqual(
        (await both.waitFor(5, isChange)).map((m) => at(m.id)),
        ['26', '27', '28', '29', '30'],
      );
      const byQuery = await openStream(`${url}/events?after=${await idIn(h.store, 30)}`, h.tokens.read);
      await createMany(100, 1);
      assert.deepEqual(
        (await byQuery.waitFor(1, isChange)).map((m) => at(m.id)),
        ['31'],
      );
      for (const s of [byHeader, both, byQuery]) s.close();
    });

    it('a reader that drops and resumes at random points while another client writes sees the whole log, in order, once', async () => {
      const writer = (async () => {
        for (let batch = 0; batch < 20; batch++) {
          await createMany(1000 + batch * 10, 10);
          await write('PATCH', `/plants/${1000 + batch * 10}`, '{"name":"renamed"}');
          await write('DELETE', `/plants/${1001 + batch * 10}`);
        }
      })();
      const seen: string[] = [];
      let resumeFrom: string | undefined = '0';
      while (seen.length < 240) {
        const stream = await openStream(
          `${url}/events`,
          h.tokens.read,
          resumeFrom === undefined ? {} : { 'last-event-id': resumeFrom },
        );
        await stream.waitFor(Math.min(1 + Math.floor(Math.random() * 40), 240 - seen.length), isChange, 20_000);
        stream.close();
        const got = stream.messages.filter(isChange).map((m) => m.id as string);
        seen.push(...got);
        resumeFrom = lastId(stream.messages) ?? resumeFrom;
      }
      await writer;
      assert.deepEqual(
        seen.slice(0, 240).map(at),
        Array.from({ length: 240 }, (_, i) => String(i + 1)),
      );
      const log = await h.store.changes.after(0n, 1000);
      assert.equal(log.length, 240);
    });

    it("filters by event types and by tag, and moves the client's position past what it skipped", async () => {
      const deletes = await openStream(`${url}/events?types=plant.deleted`, h.tokens.read);
      const even = await openStream(`${url}/events?tag=even&types=plant.created,plant.deleted`, h.tokens.read);
      await createMany(1, 4);
      await write('DELETE', '/plants/2');
      await write('DELETE', '/plants/3');
      assert.deepEqual(
        (await deletes.waitFor(2, isChange)).map((m) => [at(m.id), m.data]),
        [
          ['5', '{"id":2}'],
          ['6', '{"id":3}'],
        ],
      );
      assert.deepEqual(
        (await even.waitFor(3, isChange)).map((m) => [at(m.id), m.event]),
        [
          ['2', 'plant.created'],
          ['4', 'plant.created'],
          ['5', 'plant.deleted'],
        ],
      );
      // Position 6 (an odd plant) was skipped: the next heartbeat says so with an id-only message.
      await even.waitFor(1, (m) => at(m.id) === '6' && m.event === undefined);
      deletes.close();
      even.close();
    });

    it('tells a ?tag= reader that a plant left the tag: a change passes if the old or the new tag matches, and says the old one', async () => {
      const hp = await openStream(`${url}/events?tag=hp`, h.tokens.read);
      await write('POST', '/plants', '{"id":1,"name":"fern","tag":"hp"}');
      await write('PATCH', '/plants/1', '{"tag":"office"}');
      await write('PATCH', '/plants/1', '{"name":"big fern"}'); // in office: not hp's business
      await write('PATCH', '/plants/1', '{"tag":"hp"}');
      await write('PATCH', '/plants/1', '{"tag":null}');
      await write('DELETE', '/plants/1'); // its last tag was none
      await write('POST', '/plants', '{"id":2,"name":"palm","tag":"hp"}');
      await write('DELETE', '/plants/2');
      assert.deepEqual(
        (await hp.waitFor(6, isChange)).map((m) => [at(m.id), m.event, m.data]),
        [
          ['1', 'plant.created', '{"id":1,"name":"fern","tag":"hp"}'],
          ['2', 'plant.updated', '{"id":1,"name":"fern","tag":"office","previousTag":"hp"}'],
          ['4', 'plant.updated', '{"id":1,"name":"big fern","tag":"hp","previousTag":"office"}'],
          ['5', 'plant.updated', '{"id":1,"name":"big fern","previousTag":"hp"}'],
          ['7', 'plant.created', '{"id":2,"name":"palm","tag":"hp"}'],
          ['8', 'plant.deleted', '{"id":2}'],
        ],
      );
      hp.close();
    });

    it('refuses, before streaming, a position no longer kept (410), one never reached and a malformed one (400)', async () => {
      await createMany(1, 5);
      assert.equal(await h.store.changes.prune(new Date(Date.now() + 60_000), 3), 3);
      const expired = await openStream(`${url}/events`, h.tokens.read, { 'last-event-id': await idIn(h.store, 1) });
      assert.equal(expired.status, 410);
      const record = JSON.parse(await expired.body()) as { error: number; message: string };
      assert.equal(record.error, Errors.EVENTS_EXPIRED.code);
      assert.match(record.message, /changes after 1 are no longer kept/);
      const kept = await openStream(`${url}/events?after=${await idIn(h.store, 3)}`, h.tokens.read);
      assert.equal(kept.status, 200);
      assert.deepEqual(
        (await kept.waitFor(2, isChange)).map((m) => at(m.id)),
        ['4', '5'],
      );
      kept.close();
      const future = await openStream(`${url}/events?after=${await idIn(h.store, 99)}`, h.tokens.read);
      assert.equal(future.status, 400);
      assert.match(await future.body(), /past the last change \(5\)/);
      const malformed = await openStream(`${url}/events`, h.tokens.read, { 'last-event-id': 'abc' });
      assert.equal(malformed.status, 400);
      assert.match(await malformed.body(), /Last-Event-ID must be an event id/);
      const unknownType = await openStream(`${url}/events?types=plant.eaten`, h.tokens.read);
      assert.equal(unknownType.status, 400);
      assert.match(await unknownType.body(), /types/);
    });

    it('needs plants:read', async () => {
      const denied = await openStream(`${url}/events`, h.tokens.admin);
      assert.equal(denied.status, 403);
    });

    it('ends the streams of a shutting-down service with stream.shutdown and where to resume', async () => {
      const stream = await openStream(`${url}/events`, h.tokens.read);
      await createMany(1, 2);
      await stream.waitFor(2, isChange);
      const expected = await idIn(h.store, 2);
      await h.app.close();
      await stream.ended;
      const closing = stream.messages.at(-1);
      assert.equal(closing?.event, 'stream.shutdown');
      assert.equal((JSON.parse(closing?.data ?? '{}') as { lastEventId: string }).lastEventId, expected);
    });
  });

for (const backend of testBackends())
  describe(`GET /events and its token [${backend.name}]`, () => {
    let h: Harness;
    let url: string;
    beforeEach(async () => {
      h = await createHarness({ backend, env: { TOKEN_CACHE_TTL_MS: '100', EVENTS_HEARTBEAT_MS: '200' } });
      url = await listen(h);
    });
    afterEach(async () => {
      await h.close();
    });

    const create = async (id: number) => {
      const response = await fetch(`${url}/plants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${h.tokens.write}`, 'content-type': 'application/json' },
        body: `{"id":${id},"name":"plant ${id}"}`,
      });
      assert.equal(response.status, 200);
    };
    /** The stream's closing message, once the server has ended it; fails after `withinMs`. */
    const closingOf = async (stream: Awaited<ReturnType<typeof openStream>>, withinMs: number) => {
      const ended = await Promise.race([stream.ended.then(() => true), sleep(withinMs).then(() => false)]);
      assert.ok(ended, `the stream still runs ${withinMs} ms later`);
      const closing = stream.messages.at(-1);
      return {
        event: closing?.event,
        data: JSON.parse(closing?.data ?? '{}') as { reason: string; lastEventId: string },
      };
    };

    it("ends the streams of a token revoked while they run with stream.unauthorized and where to resume; other tokens' streams go on", async () => {
      const issued = await issueToken(h.store.tokens, { name: 'watcher', scopes: ['plants:read'] });
      const [first, second, other] = [
        await openStream(`${url}/events`, issued.secret),
        await openStream(`${url}/events`, issued.secret),
        await openStream(`${url}/events`, h.tokens.read),
      ];
      await create(1);
      await first.waitFor(1, isChange);
      await h.store.tokens.revokeToken('watcher', new Date());
      for (const stream of [first, second]) {
        assert.deepEqual(await closingOf(stream, 3000), {
          event: 'stream.unauthorized',
          data: {
            reason: 'the bearer token has been revoked: reconnect with a valid token to resume from lastEventId',
            lastEventId: await idIn(h.store, 1),
          },
        });
      }
      assert.equal((await openStream(`${url}/events`, issued.secret)).status, 401);
      await create(2);
      assert.deepEqual(
        (await other.waitFor(2, isChange)).map((m) => at(m.id)),
        ['1', '2'],
      );
      other.close();
    });

    it('ends a stream when its token expires', async () => {
      const issued = await issueToken(h.store.tokens, { name: 'brief', scopes: ['plants:read'], expiresInMs: 1000 });
      const stream = await openStream(`${url}/events`, issued.secret);
      assert.equal(stream.status, 200);
      const { event, data } = await closingOf(stream, 4000);
      assert.equal(event, 'stream.unauthorized');
      assert.match(data.reason, /^the bearer token has expired/);
    });
  });

for (const backend of testBackends())
  describe(`GET /events limits [${backend.name}]`, () => {
    let h: Harness;
    let url: string;
    beforeEach(async () => {
      h = await createHarness({
        backend,
        env: {
          EVENTS_MAX_STREAMS_PER_TOKEN: '2',
          EVENTS_MAX_BACKLOG_BYTES: '65536',
          EVENTS_STALL_MS: '500',
          EVENTS_HEARTBEAT_MS: '200',
        },
      });
      url = await listen(h);
    });
    afterEach(async () => {
      await h.close();
    });

    it('refuses a token more streams than EVENTS_MAX_STREAMS_PER_TOKEN (429), and counts a closed one as gone', async () => {
      const [a, b] = [
        await openStream(`${url}/events`, h.tokens.read),
        await openStream(`${url}/events`, h.tokens.read),
      ];
      const third = await openStream(`${url}/events`, h.tokens.read);
      assert.equal(third.status, 429);
      assert.match(await third.body(), /"error":42902/);
      assert.equal(
        (await openStream(`${url}/events`, h.tokens.all)).status,
        200,
        'another token has its own allowance',
      );
      a.close();
      // The place comes back once the service has seen the connection close.
      let again: Awaited<ReturnType<typeof openStream>> | undefined;
      await waitFor("the closed stream's place given back", async () => {
        const opened = await openStream(`${url}/events`, h.tokens.read);
        if (opened.status === 200) again = opened;
        else opened.close();
        return again !== undefined;
      });
      for (const s of [b, again]) s?.close();
    });

    it('holds a token to EVENTS_MAX_STREAMS_PER_TOKEN when its streams open at once', async () => {
      const streams = await Promise.all(Array.from({ length: 8 }, () => openStream(`${url}/events`, h.tokens.read)));
      assert.deepEqual(streams.map((s) => s.status).sort(), [200, 200, 429, 429, 429, 429, 429, 429]);
      for (const s of streams) s.close();
    });

    it('frees the place of a stream whose client went away while it was being opened', async () => {
      const { port } = new URL(url);
      for (let i = 0; i < 20; i++) {
        // The request, then the connection closed at once: gone while the service looks up where to resume.
        const socket = connect(Number(port), '127.0.0.1');
        socket.write(`GET /events?after=0 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${h.tokens.read}\r\n\r\n`, () =>
          socket.destroy(),
        );
        await once(socket, 'close');
      }
      await sleep(300);
      const streams = [
        await openStream(`${url}/events`, h.tokens.read),
        await openStream(`${url}/events`, h.tokens.read),
      ];
      assert.deepEqual(
        streams.map((s) => s.status),
        [200, 200],
      );
      for (const s of streams) s.close();
    });

    it('cuts off a reader that stops reading for EVENTS_STALL_MS, with stream.overflow naming the last id it was sent', async () => {
      const slow = await openStream(`${url}/events`, h.tokens.read);
      slow.pause();
      let body = '';
      for (let id = 1; id <= 60_000; id++)
        body += `{"id":${id},"name":"a plant with a name long enough to fill buffers ${id}"}\n`;
      const imported = await fetch(`${url}/plants/import`, {
        method: 'POST',
        headers: { authorization: `Bearer ${h.tokens.write}`, 'content-type': 'application/x-ndjson' },
        body,
      });
      assert.equal(imported.status, 200);
      // Until the service has cut the paused reader off, however slow the machine: the cut gives its place back at
      // once, so the token can open two streams again (EVENTS_MAX_STREAMS_PER_TOKEN).
      await waitFor(
        'the paused reader cut off',
        async () => {
          const probes = [];
          for (let i = 0; i < 2; i++) probes.push(await openStream(`${url}/events`, h.tokens.read));
          for (const probe of probes) probe.close();
          return probes.every((probe) => probe.status === 200);
        },
        WAIT_BOUND_MS,
        200,
      );
      // Now read what was sent: it must end with the overflow event.
      slow.resume();
      await slow.ended;
      const closing = slow.messages.at(-1);
      assert.equal(closing?.event, 'stream.overflow');
      const { lastEventId } = JSON.parse(closing?.data ?? '{}') as { lastEventId: string };
      const sent = slow.messages.filter(isChange);
      assert.equal(lastEventId, sent.at(-1)?.id);
      assert.ok(sent.length < 60_000, `${sent.length} messages were sent before the cut-off`);
      assert.match(
        (JSON.parse(closing?.data ?? '{}') as { reason: string }).reason,
        /^the client read nothing for 500 ms while \d+ bytes waited for it/,
      );
    });
  });

for (const backend of testBackends())
  describe(`GET /events, readers far behind [${backend.name}]`, () => {
    const CHANGES = 10_000;
    let h: Harness;
    let url: string;
    beforeEach(async () => {
      // A small backlog: every reader here is far more than it behind.
      h = await createHarness({ backend, env: { EVENTS_MAX_BACKLOG_BYTES: '16384' } });
      url = await listen(h);
    });
    afterEach(async () => {
      await h.close();
    });

    const importMany = async (count: number) => {
      let body = '';
      for (let id = 1; id <= count; id++) body += `{"id":${id},"name":"plant number ${id}","tag":"t${id % 3}"}\n`;
      const response = await fetch(`${url}/plants/import`, {
        method: 'POST',
        headers: { authorization: `Bearer ${h.tokens.write}`, 'content-type': 'application/x-ndjson' },
        body,
      });
      assert.equal(response.status, 200, await response.text());
    };
    const assertEveryChange = (messages: SseMessage[]) => {
      assert.equal(
        messages.filter((m) => m.event?.startsWith('stream.') === true).length,
        0,
        `cut off: ${JSON.stringify(messages.at(-1))}`,
      );
      const positions = messages.filter(isChange).map((m) => Number(at(m.id)));
      assert.equal(positions.length, CHANGES);
      assert.ok(
        positions.every((position, i) => position === i + 1),
        'in order, each once',
      );
    };

    it('a reader resuming far behind gets every change on one connection, at its own pace', async () => {
      await importMany(CHANGES);
      const stream = await openStream(`${url}/events?after=0`, h.tokens.read);
      await Promise.race([stream.waitFor(CHANGES, isChange, 60_000), stream.ended]);
      assertEveryChange(stream.messages);
      stream.close();
    });

    it('a live reader gets every change of a large import committed at once, on one connection', async () => {
      const stream = await openStream(`${url}/events`, h.tokens.read);
      await importMany(CHANGES);
      await Promise.race([stream.waitFor(CHANGES, isChange, 60_000), stream.ended]);
      assertEveryChange(stream.messages);
      stream.close();
    });
  });

for (const backend of testBackends())
  describe(`GET /events while the service shuts down [${backend.name}]`, () => {
    it('ends a stream asked for once closing has begun, and one still being set up, with stream.shutdown; the close completes', async () => {
      // The first read of the change log's bounds (the hub starting for the first stream) waits
      // for `release`, so closing begins while that stream is still being set up.
      let release = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      let entered = () => {};
      const holding = new Promise<void>((resolve) => (entered = resolve));
      let first = true;
      const h = await createHarness({
        backend,
        wrapStore: (store) => {
          const bounds = store.changes.bounds.bind(store.changes);
          const changes = Object.assign(Object.create(store.changes) as Store['changes'], {
            bounds: async () => {
              if (first) {
                first = false;
                entered();
                await held;
              }
              return bounds();
            },
          });
          return Object.assign(Object.create(store) as Store, { changes });
        },
      });
      try {
        const url = await listen(h);
        await h.request({
          method: 'POST',
          url: '/plants',
          headers: { authorization: `Bearer ${h.tokens.write}`, 'content-type': 'application/json' },
          payload: '{"id":1,"name":"a"}',
        });
        const settingUp = openStream(`${url}/events`, h.tokens.read);
        await holding;
        const closed = h.app.close();
        // Closing has begun (it waits for the hub that stream is starting); the server still accepts.
        await sleep(100);
        const late = await openStream(`${url}/events?after=0`, h.tokens.read);
        await late.ended;
        assert.equal(late.status, 200);
        assert.deepEqual(
          late.messages.map((m) => m.event ?? `id ${at(m.id)}`),
          ['id 0', 'stream.shutdown'],
        );
        const history = late.messages[0]?.id?.split('-')[0] ?? '';
        assert.equal(
          (JSON.parse(late.messages[1]?.data ?? '{}') as { lastEventId: string }).lastEventId,
          `${history}-0`,
        );

        release();
        const stream = await settingUp;
        const outcome = await Promise.race([
          closed.then(() => 'closed'),
          sleep(5000).then(() => 'still closing after 5 s'),
        ]);
        assert.equal(outcome, 'closed');
        await stream.ended;
        assert.equal(stream.messages.at(-1)?.event, 'stream.shutdown');
        assert.equal(
          (JSON.parse(stream.messages.at(-1)?.data ?? '{}') as { lastEventId: string }).lastEventId,
          `${history}-1`,
        );
      } finally {
        release();
        await h.close();
      }
    });
  });
