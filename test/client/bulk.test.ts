/**
 * The typed client's import and export against a real listening server: bodies
 * from a string and from a generator (sent while it is still producing), the
 * typed summary, all-or-nothing failures as PlantStoreError, and exports that keep
 * every digit of an int64 id.
 */
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  createPlantStoreClient,
  PlantStoreError,
  type ImportSummary,
  type Plant,
  type PlantStoreClient,
} from '../../packages/client/src/index.js';
import { createHarness, type Harness } from '../support/harness.js';
import { listen } from './servers.js';

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

describe('typed client: importPlants and exportPlants', () => {
  let h: Harness;
  let client: PlantStoreClient;
  const sockets = new Set<Socket>();
  /** Bytes the server has read from every client so far. */
  const bytesReceived = () => [...sockets].reduce((sum, socket) => sum + socket.bytesRead, 0);

  before(async () => {
    h = await createHarness();
    const baseUrl = await listen(h);
    h.app.server.on('connection', (socket: Socket) => sockets.add(socket));
    client = createPlantStoreClient({ baseUrl, token: h.tokens.all });
  });
  after(() => h.close());

  it('imports NDJSON from a string and answers the typed summary', async () => {
    const body = '{"id":1,"name":"Monstera","tag":"bulk-a"}\n{"id":2,"name":"Fern"}\n';
    const summary: ImportSummary = await client.importPlants(body);
    assert.deepEqual(summary, { created: 2, unchanged: 0, skipped: 0, problems: [] });
    assert.deepEqual(
      await client.importPlants(body),
      { created: 0, unchanged: 2, skipped: 0, problems: [] },
      'a retry changes nothing',
    );
    assert.deepEqual(await client.getPlant(2n), { id: 2n, name: 'Fern' });
  });

  it('imports CSV from bytes', async () => {
    const body = new TextEncoder().encode('id,name,tag\r\n3,"Aloe, vera",bulk-a\r\n4,Cactus,\r\n');
    assert.deepEqual(await client.importPlants(body, { format: 'csv' }), {
      created: 2,
      unchanged: 0,
      skipped: 0,
      problems: [],
    });
    assert.deepEqual(await client.getPlant(3n), { id: 3n, name: 'Aloe, vera', tag: 'bulk-a' });
    assert.deepEqual(await client.getPlant(4n), { id: 4n, name: 'Cactus' });
  });

  it('streams a generator: the server has the first chunk before the generator makes the rest', async () => {
    const lines = (from: number, to: number) =>
      Array.from({ length: to - from }, (_, i) => `{"id":${1000 + from + i},"name":"streamed ${from + i}"}\n`).join('');
    async function* body(): AsyncGenerator<string | Uint8Array> {
      const first = lines(0, 500);
      const before = bytesReceived();
      yield first;
      // A client holding the body until its end would never let this happen.
      const deadline = Date.now() + 10_000;
      while (bytesReceived() < before + first.length) {
        if (Date.now() > deadline)
          throw new Error('the server did not receive the first chunk before the body ended: the client buffers');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      for (let from = 500; from < 20_000; from += 500) yield new TextEncoder().encode(lines(from, from + 500));
    }
    assert.deepEqual(await client.importPlants(body()), { created: 20_000, unchanged: 0, skipped: 0, problems: [] });
    assert.equal((await client.countPlants({ q: 'streamed' })).count, 20_000);
  });

  it('mode skip stores the valid lines and reports the others by line number', async () => {
    const body = '{"id":50,"name":"good"}\n{"id":51}\n{"id":1,"name":"not Monstera"}\n';
    const summary = await client.importPlants(body, { mode: 'skip' });
    assert.equal(summary.created, 1);
    assert.equal(summary.skipped, 2);
    assert.deepEqual(
      summary.problems.map((p) => [p.line, p.error]),
      [
        [2, 40004],
        [3, 40901],
      ],
    );
    assert.match(summary.problems[0]?.message ?? '', /name/);
  });

  it('all or nothing: a conflict throws PlantStoreError 409 naming the line, and nothing is stored', async () => {
    const body = '{"id":60,"name":"new"}\n{"id":1,"name":"not Monstera"}\n';
    const error = await client.importPlants(body).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error instanceof PlantStoreError, String(error));
    assert.equal(error.status, 409);
    assert.equal(error.error, 40902);
    assert.match(error.message, /^nothing was imported: line 2: a plant with id 1 already exists/);
    await assert.rejects(client.getPlant(60n), (e: unknown) => e instanceof PlantStoreError && e.status === 404);
  });

  it('an invalid line throws PlantStoreError 400 (IMPORT_INVALID)', async () => {
    await assert.rejects(client.importPlants('{"id":61,"name":"ok"}\nnot json\n'), (e: unknown) => {
      assert.ok(e instanceof PlantStoreError);
      assert.deepEqual([e.status, e.error], [400, 40007]);
      assert.match(e.message, /^nothing was imported: line 2: request body is not valid JSON/);
      return true;
    });
  });

  it('a source that fails is thrown as itself, not as an unreachable service', async () => {
    async function* failing(): AsyncGenerator<string> {
      yield '{"id":70,"name":"first"}\n';
      throw new Error('disk on fire');
    }
    await assert.rejects(client.importPlants(failing()), /disk on fire/);
    await assert.rejects(client.getPlant(70n), (e: unknown) => e instanceof PlantStoreError && e.status === 404);
  });

  it('exportPlants yields every plant in id order with exact int64 ids', async () => {
    const extremes =
      '{"id":9223372036854775807,"name":"max","tag":"edge"}\n{"id":-9223372036854775808,"name":"min","tag":"edge"}\n{"id":9007199254740993,"name":"2^53+1","tag":"edge"}\n';
    await client.importPlants(extremes);
    const edge: Plant[] = await collect(client.exportPlants({ tag: 'edge' }));
    assert.deepEqual(edge, [
      { id: -9223372036854775808n, name: 'min', tag: 'edge' },
      { id: 9007199254740993n, name: '2^53+1', tag: 'edge' },
      { id: 9223372036854775807n, name: 'max', tag: 'edge' },
    ]);
    const all = await collect(client.exportPlants());
    assert.equal(all.length, (await client.countPlants()).count);
    assert.ok(
      all.every((plant, i) => i === 0 || (all[i - 1]?.id ?? 0n) < plant.id),
      'in id order',
    );
    assert.deepEqual(await collect(client.exportPlants({ q: 'monstera', tag: ['bulk-a', 'none'] })), [
      { id: 1n, name: 'Monstera', tag: 'bulk-a' },
    ]);
  });

  it('exportPlantsText gives the raw CSV; an export nothing matches is empty', async () => {
    const chunks = await collect(await client.exportPlantsText({ format: 'csv', tag: 'bulk-a' }));
    assert.equal(
      Buffer.concat(chunks).toString('utf8'),
      'id,name,tag\r\n1,Monstera,bulk-a\r\n3,"Aloe, vera",bulk-a\r\n',
    );
    assert.deepEqual(await collect(client.exportPlants({ tag: 'no-such-tag' })), []);
  });

  it('an export with a bad parameter throws PlantStoreError before any plant', async () => {
    await assert.rejects(
      client.exportPlantsText({ tag: Array.from({ length: 11 }, (_, i) => `t${i}`) }),
      (e: unknown) => e instanceof PlantStoreError && e.status === 400,
    );
  });
});
