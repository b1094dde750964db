/**
 * The typed client against a real listening server: every operation, ids past
 * 2^53 in both directions, and failures as typed errors carrying the Error record.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import {
  createPlantStoreClient,
  PlantStoreConnectionError,
  PlantStoreError,
  toPlantId,
  type PlantStoreClient,
} from '../../packages/client/src/index.js';
import { Errors } from '../../src/http/errors.js';
import { createHarness, type Harness } from '../support/harness.js';
import { closedPort, listen } from './servers.js';

describe('typed client (plantstore/client)', () => {
  let h: Harness;
  let baseUrl: string;
  let client: PlantStoreClient;

  before(async () => {
    h = await createHarness();
    baseUrl = await listen(h);
    client = createPlantStoreClient({ baseUrl, token: h.tokens.all });
  });
  after(() => h.close());

  describe('int64 ids stay exact', () => {
    const ids = [9223372036854775807n, -9223372036854775808n, 9007199254740993n, 0n, 42n];
    for (const id of ids) {
      it(`round-trips ${id} as a bigint`, async () => {
        assert.deepEqual(await client.createPlant({ id, name: `plant ${id}` }), { name: `plant ${id}` });
        const plant = await client.getPlant(id);
        assert.equal(typeof plant.id, 'bigint');
        assert.equal(plant.id, id);
        assert.deepEqual(plant, { id, name: `plant ${id}` });
      });
    }

    it('sends the id as a JSON number with every digit (the server sees 9223372036854775807)', async () => {
      const raw = await h.request({
        method: 'GET',
        url: '/plants/9223372036854775807',
        headers: { authorization: `Bearer ${h.tokens.read}` },
      });
      assert.equal(raw.body, '{"id":9223372036854775807,"name":"plant 9223372036854775807"}');
    });

    it('accepts ids as decimal strings and safe numbers', async () => {
      await client.createPlant({ id: '9223372036854775806', name: 'from a string', tag: 'str' });
      assert.deepEqual(await client.getPlant('9223372036854775806'), {
        id: 9223372036854775806n,
        name: 'from a string',
        tag: 'str',
      });
      await client.createPlant({ id: 7, name: 'from a number' });
      assert.equal((await client.getPlant(7)).id, 7n);
    });

    it('refuses, before sending, a number that was already rounded, and ids outside int64', () => {
      assert.throws(() => toPlantId(2 ** 53 + 2), RangeError);
      assert.throws(() => toPlantId(9223372036854775808n), RangeError);
      assert.throws(() => toPlantId('12abc'), RangeError);
      assert.equal(toPlantId(' -5 '), -5n);
    });
  });

  describe('operations', () => {
    it('creates with a tag, reads it back, and a same-content retry is a safe 200', async () => {
      const plant = { id: 100n, name: 'Monstera deliciosa', tag: 'houseplant' };
      assert.deepEqual(await client.createPlant(plant), { name: 'Monstera deliciosa', tag: 'houseplant' });
      assert.deepEqual(await client.createPlant(plant), { name: 'Monstera deliciosa', tag: 'houseplant' });
      assert.deepEqual(await client.getPlant(100n), plant);
    });

    it('lists a page with its next cursor, and allPlants follows every page', async () => {
      for (const id of [201n, 202n, 203n, 204n, 205n]) await client.createPlant({ id, name: `p${id}`, tag: 'paged' });
      const first = await client.listPlants({ tag: 'paged', limit: 2 });
      assert.deepEqual(
        first.plants.map((p) => p.id),
        [201n, 202n],
      );
      assert.match(first.nextCursor ?? '', /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
      assert.equal(first.total, undefined, 'no count unless asked');
      const last = await client.listPlants({ tag: 'paged', limit: 3, cursor: first.nextCursor });
      assert.deepEqual(
        last.plants.map((p) => p.id),
        [203n, 204n, 205n],
      );
      assert.equal(last.nextCursor, undefined);
      const afterId = await client.listPlants({ tag: 'paged', limit: 10, after: 203n });
      assert.deepEqual(
        afterId.plants.map((p) => p.id),
        [204n, 205n],
      );
      const all: bigint[] = [];
      for await (const plant of client.allPlants({ tag: 'paged', limit: 2 })) all.push(plant.id);
      assert.deepEqual(all, [201n, 202n, 203n, 204n, 205n]);
    });

    it('finds: q, sort, several tags, counts, and allPlants in name order', async () => {
      const plants = [
        { id: 401n, name: 'Monstera deliciosa', tag: 'find-a' },
        { id: 402n, name: 'Café au lait', tag: 'find-b' },
        { id: 403n, name: 'monstera adansonii', tag: 'find-c' },
        { id: 404n, name: 'Aloe', tag: 'find-a' },
      ];
      for (const plant of plants) await client.createPlant(plant);
      const found = await client.listPlants({ q: 'MONST', sort: '-name', tag: ['find-a', 'find-c'], count: 'exact' });
      assert.deepEqual(
        found.plants.map((p) => p.id),
        [401n, 403n],
        'monstera deliciosa after monstera adansonii, reversed',
      );
      assert.deepEqual(found.total, { count: 2, exact: true });
      assert.deepEqual(
        (await client.listPlants({ q: 'cafe' })).plants.map((p) => p.id),
        [402n],
      );
      assert.deepEqual(await client.countPlants({ tag: ['find-a', 'find-b'] }), { count: 3, exact: true });
      assert.deepEqual(await client.countPlants({ q: 'monstera', tag: ['find-a', 'find-c'], how: 'estimated' }), {
        count: 2,
        exact: true,
      });
      const byName: string[] = [];
      for await (const plant of client.allPlants({ tag: ['find-a', 'find-b', 'find-c'], sort: 'name', limit: 1 }))
        byName.push(plant.name);
      assert.deepEqual(byName, ['Aloe', 'Café au lait', 'monstera adansonii', 'Monstera deliciosa']);
      await assert.rejects(
        client.listPlants({ sort: 'name', cursor: found.nextCursor ?? 'x.y' }),
        (error: unknown) => error instanceof PlantStoreError && error.status === 400,
      );
    });

    describe('on the wire', () => {
      const walk = [
        { id: 601n, name: 'Begonia', tag: 'walk-1' },
        { id: 602n, name: 'aspidistra', tag: 'walk-2' },
        { id: 603n, name: 'Calathea', tag: 'walk-1' },
        { id: 604n, name: 'Éverlasting daisy', tag: 'walk-2' },
        { id: 605n, name: 'dracaena', tag: 'walk-1' },
        { id: 606n, name: 'Dieffenbachia', tag: 'walk-3' },
      ];
      let sent: URL[];
      let headers: Headers[];
      let recording: PlantStoreClient;

      before(async () => {
        for (const plant of walk) await client.createPlant(plant);
        recording = createPlantStoreClient({
          baseUrl,
          token: h.tokens.all,
          fetch: (input, init) => {
            const request = new Request(input, init);
            sent.push(new URL(request.url));
            headers.push(request.headers);
            return globalThis.fetch(request);
          },
        });
      });
      beforeEach(() => {
        sent = [];
        headers = [];
      });

      it('sends several tags as the parameter repeated, q, sort and the count as a Prefer header', async () => {
        const page = await recording.listPlants({ q: 'd', sort: 'name', tag: ['walk-1', 'walk-2'], count: 'exact' });
        assert.deepEqual(
          page.plants.map((p) => p.name),
          ['dracaena', 'Éverlasting daisy'],
          'q=d in name order, Dieffenbachia (walk-3) left out',
        );
        assert.deepEqual(page.total, { count: 2, exact: true });
        assert.equal(page.nextCursor, undefined);
        assert.equal(sent.length, 1);
        const [url] = sent;
        assert.deepEqual(url?.searchParams.getAll('tag'), ['walk-1', 'walk-2']);
        assert.match(url?.search ?? '', /[?&]tag=walk-1&tag=walk-2(&|$)/);
        assert.equal(url?.searchParams.get('q'), 'd');
        assert.equal(url?.searchParams.get('sort'), 'name');
        assert.equal(headers[0]?.get('prefer'), 'count=exact');
        assert.equal(headers[0]?.get('authorization'), `Bearer ${h.tokens.all}`);

        await recording.listPlants({ tag: 'walk-3' });
        assert.deepEqual(sent[1]?.searchParams.getAll('tag'), ['walk-3'], 'a single tag is one parameter');
        assert.equal(headers[1]?.get('prefer'), null, 'no Prefer unless a count is asked');
      });

      it('countPlants asks for a one-plant page with the count', async () => {
        assert.deepEqual(await recording.countPlants({ tag: ['walk-1', 'walk-2', 'walk-3'] }), {
          count: 6,
          exact: true,
        });
        assert.deepEqual(
          await recording.countPlants({ q: 'D', tag: ['walk-1', 'walk-2', 'walk-3'], how: 'estimated' }),
          { count: 3, exact: true },
          'SQLite always counts',
        );
        assert.equal(sent[0]?.searchParams.get('limit'), '1');
        assert.equal(headers[0]?.get('prefer'), 'count=exact');
        assert.equal(headers[1]?.get('prefer'), 'count=estimated');
      });

      it('allPlants follows the cursors through several pages in -name order, keeping q, sort and tags', async () => {
        const names: string[] = [];
        for await (const plant of recording.allPlants({ tag: ['walk-1', 'walk-2', 'walk-3'], sort: '-name', limit: 2 }))
          names.push(plant.name);
        assert.deepEqual(names, [
          'Éverlasting daisy',
          'dracaena',
          'Dieffenbachia',
          'Calathea',
          'Begonia',
          'aspidistra',
        ]);
        assert.equal(sent.length, 3, 'three pages of two');
        assert.equal(sent[0]?.searchParams.get('cursor'), null);
        for (const url of sent) {
          assert.equal(url.searchParams.get('sort'), '-name');
          assert.deepEqual(url.searchParams.getAll('tag'), ['walk-1', 'walk-2', 'walk-3']);
        }
        assert.notEqual(sent[1]?.searchParams.get('cursor'), null);
        assert.notEqual(sent[2]?.searchParams.get('cursor'), sent[1]?.searchParams.get('cursor'));

        sent = [];
        const found: bigint[] = [];
        for await (const plant of recording.allPlants({ q: 'a', sort: 'name', tag: ['walk-1', 'walk-2'], limit: 1 }))
          found.push(plant.id);
        assert.deepEqual(found, [602n], 'only aspidistra has a word starting with a');
        assert.equal(sent.length, 1, 'a full last page of one has no next link');
      });
    });

    it('reads an estimated total and the cursor from the headers', async () => {
      const answering = createPlantStoreClient({
        baseUrl: 'http://plants.invalid',
        fetch: () =>
          Promise.resolve(
            new Response('[]', {
              headers: {
                'content-type': 'application/json',
                link: '</plants?limit=1&sort=-name&tag=a&tag=b&cursor=abc_-9.XYZ>; rel="next"',
                'x-total-count': '1234567',
                'preference-applied': 'count=estimated',
              },
            }),
          ),
      });
      assert.deepEqual(await answering.listPlants({ count: 'estimated' }), {
        plants: [],
        nextCursor: 'abc_-9.XYZ',
        total: { count: 1234567, exact: false },
      });
      assert.deepEqual(await answering.countPlants({ how: 'estimated' }), { count: 1234567, exact: false });
    });

    it('deletes, after which the id reads as 404', async () => {
      await client.createPlant({ id: 300n, name: 'short-lived' });
      await client.deletePlant(300n);
      await assert.rejects(
        client.getPlant(300n),
        (error: unknown) => error instanceof PlantStoreError && error.status === 404,
      );
    });

    it('reports readiness', async () => {
      await client.ready();
    });
  });

  describe('conditional requests', () => {
    it('reads a plant with its ETag; a read with that ETag is not-modified until the plant changes', async () => {
      await client.createPlant({ id: 9223372036854775801n, name: 'Fern', tag: 'shade' });
      const read = await client.readPlant(9223372036854775801n);
      assert.equal(read.kind, 'plant');
      if (read.kind !== 'plant') return;
      assert.deepEqual(read.plant, { id: 9223372036854775801n, name: 'Fern', tag: 'shade' });
      assert.match(read.etag, /^"[0-9]+"$/);
      assert.deepEqual(await client.readPlant(9223372036854775801n, { ifNoneMatch: read.etag }), {
        kind: 'not-modified',
        etag: read.etag,
      });
      await client.updatePlant(9223372036854775801n, { name: 'Fern 2' });
      const again = await client.readPlant(9223372036854775801n, { ifNoneMatch: read.etag });
      assert.equal(again.kind, 'plant');
    });

    it('updates and replaces with If-Match; a stale ETag is a precondition-failed outcome (412) and changes nothing', async () => {
      await client.createPlant({ id: 501n, name: 'Aloe', tag: 'succulent' });
      const read = await client.readPlant(501n);
      assert.equal(read.kind, 'plant');
      const etag = read.kind === 'plant' ? read.etag : '';
      const updated = await client.updatePlant(501n, { tag: null }, { ifMatch: etag });
      assert.equal(updated.kind, 'updated');
      if (updated.kind !== 'updated') return;
      assert.deepEqual(updated.plant, { id: 501n, name: 'Aloe' });
      assert.notEqual(updated.etag, etag);
      const stale = await client.replacePlant(501n, { name: 'Other' }, { ifMatch: etag });
      assert.equal(stale.kind, 'precondition-failed');
      if (stale.kind === 'precondition-failed') {
        assert.equal(stale.error.status, 412);
        assert.equal(stale.error.error, Errors.PRECONDITION_FAILED.code);
      }
      assert.deepEqual(await client.getPlant(501n), { id: 501n, name: 'Aloe' });
      const replaced = await client.replacePlant(
        501n,
        { name: 'Aloe vera', tag: 'medicinal' },
        { ifMatch: updated.etag },
      );
      assert.deepEqual(replaced.kind === 'updated' && replaced.plant, {
        id: 501n,
        name: 'Aloe vera',
        tag: 'medicinal',
      });
      assert.equal((await client.deletePlant(501n, { ifMatch: updated.etag })).kind, 'precondition-failed');
      assert.deepEqual(await client.deletePlant(501n, { ifMatch: '*' }), { kind: 'deleted' });
    });

    it('a change of an absent plant without If-Match is a 404 PlantStoreError', async () => {
      await assert.rejects(
        client.updatePlant(404405n, { name: 'x' }),
        (error: unknown) => error instanceof PlantStoreError && error.status === 404,
      );
    });
  });

  describe('errors carry the Error record', () => {
    it('404: status, catalogue code, the server message and the request id', async () => {
      const error = await client.getPlant(404404n).catch((e: unknown) => e);
      assert.ok(error instanceof PlantStoreError);
      assert.equal(error.status, 404);
      assert.equal(error.error, Errors.PLANT_NOT_FOUND.code);
      assert.equal(error.message, 'no plant has id 404404');
      assert.match(error.requestId ?? '', /.+/);
    });

    it('409 on a conflicting create', async () => {
      await client.createPlant({ id: 409n, name: 'first' });
      const error = await client.createPlant({ id: 409n, name: 'second' }).catch((e: unknown) => e);
      assert.ok(error instanceof PlantStoreError);
      assert.equal(error.status, 409);
      assert.equal(error.error, Errors.PLANT_CONFLICT.code);
    });

    it('400 names the invalid field', async () => {
      const error = await client.createPlant({ id: 1n, name: '' }).catch((e: unknown) => e);
      assert.ok(error instanceof PlantStoreError);
      assert.equal(error.status, 400);
      assert.equal(error.error, Errors.INVALID_FIELD.code);
      assert.match(error.message, /name/);
    });

    it('401 without a token, 403 with a token lacking the scope', async () => {
      const anonymous = createPlantStoreClient({ baseUrl });
      const missing = await anonymous.getPlant(1n).catch((e: unknown) => e);
      assert.ok(missing instanceof PlantStoreError);
      assert.equal(missing.status, 401);
      assert.equal(missing.error, Errors.TOKEN_MISSING.code);
      const reader = createPlantStoreClient({ baseUrl, token: h.tokens.read });
      const forbidden = await reader.createPlant({ id: 1n, name: 'x' }).catch((e: unknown) => e);
      assert.ok(forbidden instanceof PlantStoreError);
      assert.equal(forbidden.status, 403);
      assert.equal(forbidden.error, Errors.INSUFFICIENT_SCOPE.code);
    });

    it('a service that cannot be reached is a PlantStoreConnectionError naming the URL', async () => {
      const port = await closedPort();
      const nowhere = createPlantStoreClient({ baseUrl: `http://127.0.0.1:${port}`, token: h.tokens.all });
      const error = await nowhere.getPlant(1n).catch((e: unknown) => e);
      assert.ok(error instanceof PlantStoreConnectionError);
      assert.match(error.message, new RegExp(`^cannot reach http://127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`));
    });
  });
});
