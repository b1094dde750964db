/**
 * The typed client's watchChanges against a real listening server: exact changes
 * (int64 ids) typed by kind; the stream from now or after a position; resuming by
 * itself with no gap and no repeat when the connection drops and when the service
 * shuts down and comes back; refusals thrown as PlantStoreError, not retried; and
 * the connection closed when the caller aborts or stops iterating.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildCheckedApp } from '../support/checked-app.js';
import {
  createPlantStoreClient,
  PlantStoreError,
  type PlantChangeEvent,
  type PlantStoreClient,
  type Reconnection,
  type WatchOptions,
} from '../../packages/client/src/index.js';
import { openStream } from '../events/sse-client.js';
import { issueToken } from '../../src/tokens/token-service.js';
import { bearer, createHarness, json, type Harness } from '../support/harness.js';
import { discardedLog } from '../support/log-streams.js';
import { listen } from './servers.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A watch running in the background: what it has yielded, and how it ended. */
interface Watch {
  readonly seen: PlantChangeEvent[];
  readonly reconnections: Reconnection[];
  /** Resolves once `count` changes were yielded; rejects after `timeoutMs` or if the iteration ended first. */
  until(count: number, timeoutMs?: number): Promise<PlantChangeEvent[]>;
  /** Aborts the watch and resolves when its loop has ended (rejects with what it threw). */
  stop(): Promise<void>;
}

/** Every watch a test started, stopped after it even when it fails (one left running would retry forever). */
const running = new Set<AbortController>();

function watch(client: PlantStoreClient, options: WatchOptions = {}): Watch {
  const seen: PlantChangeEvent[] = [];
  const reconnections: Reconnection[] = [];
  const controller = new AbortController();
  running.add(controller);
  let ended = false;
  const done = (async () => {
    try {
      for await (const change of client.watchChanges({
        reconnectDelayMs: 50,
        onReconnect: (r) => reconnections.push(r),
        ...options,
        signal: controller.signal,
      }))
        seen.push(change);
    } finally {
      ended = true;
    }
  })();
  done.catch(() => {});
  return {
    seen,
    reconnections,
    async until(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (seen.length < count) {
        if (ended) await done; // throws what ended it
        if (ended || Date.now() > deadline)
          assert.fail(
            `only ${seen.length} of ${count} changes arrived: ${JSON.stringify(seen.map((c) => String(c.position)))}`,
          );
        await sleep(20);
      }
      return seen.slice(0, count);
    },
    async stop() {
      controller.abort();
      await done;
    },
  };
}

describe('typed client: watchChanges', () => {
  let h: Harness;
  let url: string;
  let client: PlantStoreClient;
  let restarted: FastifyInstance | undefined;

  beforeEach(async () => {
    // One stream per token: a watch that left its connection open would make the next one fail.
    h = await createHarness({
      env: { EVENTS_HEARTBEAT_MS: '200', EVENTS_MAX_STREAMS_PER_TOKEN: '1', TOKEN_CACHE_TTL_MS: '100' },
    });
    url = await listen(h);
    client = createPlantStoreClient({ baseUrl: url, token: h.tokens.read });
  });
  afterEach(async () => {
    for (const controller of running) controller.abort();
    running.clear();
    await restarted?.close();
    restarted = undefined;
    await h.close();
  });

  // Writes go through inject: no pooled socket of this process is caught by the connection cuts below.
  const send = async (method: string, path: string, body?: string) => {
    const response = await h.request({
      method,
      url: path,
      headers: { ...bearer(h.tokens.write), ...(body === undefined ? {} : json) },
      ...(body === undefined ? {} : { payload: body }),
    });
    assert.ok(response.statusCode < 300, response.body);
  };
  const create = (id: bigint | number, name = `plant ${id}`) =>
    send('POST', '/plants', `{"id":${id},"name":"${name}"}`);
  const positions = (changes: readonly PlantChangeEvent[]) => changes.map((change) => change.position);
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => BigInt(from + i));
  /** The event id of `position` in the store's history. */
  const idAt = async (position: number) => `${(await h.store.changes.bounds()).history}-${position}`;

  /** Resolves once the token's one stream is free again, i.e. the watch's connection was closed. */
  async function streamReleased(): Promise<void> {
    const deadline = Date.now() + 5000;
    for (;;) {
      const probe = await openStream(`${url}/events`, h.tokens.read);
      probe.close();
      if (probe.status === 200) return;
      assert.ok(Date.now() < deadline, `the stream is still held (a new one gets ${probe.status})`);
      await sleep(50);
    }
  }

  it('yields every change with exact int64 ids, typed by kind', async () => {
    const w = watch(client, { after: '0' });
    await send('POST', '/plants', '{"id":9223372036854775807,"name":"Monstera","tag":"houseplant"}');
    await send('PATCH', '/plants/9223372036854775807', '{"tag":null}');
    await send('DELETE', '/plants/9223372036854775807');
    await send('POST', '/plants', '{"id":-9223372036854775808,"name":"Min"}');
    assert.deepEqual(await w.until(4), [
      {
        id: await idAt(1),
        position: 1n,
        type: 'plant.created',
        plant: { id: 9223372036854775807n, name: 'Monstera', tag: 'houseplant' },
      },
      {
        id: await idAt(2),
        position: 2n,
        type: 'plant.updated',
        plant: { id: 9223372036854775807n, name: 'Monstera' },
        previousTag: 'houseplant',
      },
      { id: await idAt(3), position: 3n, type: 'plant.deleted', plant: { id: 9223372036854775807n } },
      { id: await idAt(4), position: 4n, type: 'plant.created', plant: { id: -9223372036854775808n, name: 'Min' } },
    ]);
    await w.stop();
    assert.equal(w.seen.length, 4);
  });

  it('starts now without `after`, right after an event id with it, and filters by type and tag', async () => {
    for (let id = 1; id <= 3; id++) await create(id);
    const now = watch(client);
    // Its connection opens at some point: whatever it yields first must be newer than the plants above.
    for (let id = 100; now.seen.length === 0; id++) {
      await create(id);
      await sleep(50);
    }
    const first = now.seen[0];
    assert.ok(first !== undefined && first.position > 3n && first.plant.id >= 100n, String(first?.position));
    await now.stop();
    await streamReleased();

    const fromString = watch(client, { after: await idAt(1) });
    assert.deepEqual(positions(await fromString.until(2)), [2n, 3n]);
    await fromString.stop();

    await streamReleased();
    await send('PUT', '/plants/1', '{"name":"tagged","tag":"shade"}');
    await send('DELETE', '/plants/2');
    await send('DELETE', '/plants/1');
    const filtered = watch(client, { after: await idAt(3), types: ['plant.updated', 'plant.deleted'], tag: 'shade' });
    const changes = await filtered.until(2);
    assert.deepEqual(
      changes.map((c) => [c.type, c.plant.id]),
      [
        ['plant.updated', 1n],
        ['plant.deleted', 1n],
      ],
    );
    await filtered.stop();
  });

  it('resumes by itself after the connection drops, with no gap and no repeat', async () => {
    const w = watch(client, { after: '0' });
    for (let id = 1; id <= 3; id++) await create(id);
    await w.until(3);
    h.app.server.closeAllConnections();
    for (let id = 4; id <= 6; id++) await create(id);
    await w.until(6);
    h.app.server.closeAllConnections();
    await create(7);
    assert.deepEqual(positions(await w.until(7)), range(1, 7));
    await sleep(300);
    assert.deepEqual(positions(w.seen), range(1, 7), 'nothing more, nothing twice');
    assert.ok(w.reconnections.length >= 2, JSON.stringify(w.reconnections));
    await w.stop();
  });

  it('resumes by itself when the service shuts down (stream.shutdown) and comes back on the same store', async () => {
    const w = watch(client, { after: '0' });
    for (let id = 1; id <= 2; id++) await create(id);
    await w.until(2);
    const { port } = h.app.server.address() as AddressInfo;
    await h.app.close();
    // Made while no service runs: the resumed stream reads them from the change log.
    for (let id = 3n; id <= 4n; id++) await h.store.plants.createPlant({ id, name: `offline ${id}` });
    restarted = await buildCheckedApp(h.config, { store: h.store, logStream: discardedLog() });
    await restarted.listen({ port, host: '127.0.0.1' });
    await restarted.inject({
      method: 'POST',
      url: '/plants',
      headers: { ...bearer(h.tokens.write), ...json },
      payload: '{"id":5,"name":"back"}',
    });
    const changes = await w.until(5);
    assert.deepEqual(positions(changes), range(1, 5));
    assert.deepEqual(
      changes.slice(2, 4).map((c) => (c.type === 'plant.deleted' ? '' : c.plant.name)),
      ['offline 3', 'offline 4'],
    );
    assert.match(w.reconnections[0]?.reason ?? '', /^stream\.shutdown: /);
    await w.stop();
  });

  it('a watch from now that loses its connection before any change still misses none', async () => {
    const w = watch(client, { reconnectDelayMs: 500 });
    // Connected once the token's one stream is taken.
    for (;;) {
      const probe = await openStream(`${url}/events`, h.tokens.read);
      probe.close();
      if (probe.status === 429) break;
      await sleep(50);
    }
    // The watch learns where "now" is from the stream's first message: a cut before the client has read it (the
    // service registers the stream as it writes that message) leaves it nothing to resume from. Give it time to read.
    await sleep(300);
    h.app.server.closeAllConnections();
    await create(1); // while the watch waits to reconnect
    assert.deepEqual(positions(await w.until(1, 3000)), [1n]);
  });

  it('throws a position no longer kept as PlantStoreError 410 (EVENTS_EXPIRED), without retrying', async () => {
    for (let id = 1; id <= 5; id++) await create(id);
    await h.store.changes.prune(new Date(Date.now() + 60_000), 1000);
    const w = watch(client, { after: await idAt(1) });
    const error = await w.until(1).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error instanceof PlantStoreError, String(error));
    assert.equal(error.status, 410);
    assert.equal(error.error, 41001);
    assert.deepEqual(w.reconnections, []);
  });

  it('throws an id of another history, or a bare position, as PlantStoreError 410 (EVENTS_HISTORY_CHANGED), without retrying', async () => {
    for (let id = 1; id <= 3; id++) await create(id);
    for (const after of ['2', '0123456789abcdef-2']) {
      const w = watch(client, { after });
      const error = await w.until(1).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(error instanceof PlantStoreError, String(error));
      assert.equal(error.status, 410);
      assert.equal(error.error, 41002);
      assert.deepEqual(w.reconnections, []);
    }
  });

  it('throws PlantStoreError 401 once its token is revoked while it watches (stream.unauthorized, then the reconnection refused)', async () => {
    const issued = await issueToken(h.store.tokens, { name: 'watcher', scopes: ['plants:read'] });
    const w = watch(createPlantStoreClient({ baseUrl: url, token: issued.secret }), { after: '0' });
    await create(1);
    assert.deepEqual(positions(await w.until(1)), [1n]);
    await h.store.tokens.revokeToken('watcher', new Date());
    const error = await w.until(2, 5000).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error instanceof PlantStoreError && error.status === 401, String(error));
    assert.match(w.reconnections[0]?.reason ?? '', /^stream\.unauthorized: the bearer token has been revoked/);
  });

  it('throws a token without plants:read (403) and a malformed `after` (RangeError, before connecting)', async () => {
    const admin = createPlantStoreClient({ baseUrl: url, token: h.tokens.admin });
    const error = await watch(admin)
      .until(1)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(error instanceof PlantStoreError && error.status === 403, String(error));
    assert.throws(() => client.watchChanges({ after: '-1' }), RangeError);
    assert.throws(() => client.watchChanges({ after: '9223372036854775808' }), RangeError);
    assert.throws(() => client.watchChanges({ after: 'ABCDEF0123456789-1' }), RangeError);
  });

  it('retries a refused connection until the service answers', async () => {
    // The token's one stream is taken: 429 TOO_MANY_STREAMS, retried until it is free.
    const holder = await openStream(`${url}/events`, h.tokens.read);
    const w = watch(client, { after: '0' });
    await sleep(300);
    holder.close();
    assert.ok(
      w.reconnections.some((r) => /event streams open.*\(HTTP 429, error 42902\)/.test(r.reason)),
      JSON.stringify(w.reconnections),
    );
    await create(1);
    assert.deepEqual(positions(await w.until(1)), [1n]);
    await w.stop();
  });

  it('ends the iteration and closes the connection when the signal aborts or the loop breaks', async () => {
    const w = watch(client, { after: '0' });
    await create(1);
    await w.until(1);
    await w.stop();
    await streamReleased();

    await create(2);
    for await (const change of client.watchChanges({ after: '0' })) {
      assert.equal(change.position, 1n);
      break;
    }
    await streamReleased();

    const aborted = new AbortController();
    aborted.abort();
    const none: PlantChangeEvent[] = [];
    for await (const change of client.watchChanges({ signal: aborted.signal })) none.push(change);
    assert.deepEqual(none, []);
  });
});
