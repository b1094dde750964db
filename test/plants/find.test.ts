/**
 * GET and HEAD /plants with q, sort, repeated tag, cursors and Prefer: count, over
 * HTTP on every backend: the parameters' rules (each bad value a 400 naming it),
 * cursors that are refused when altered, foreign or reused with another query, the
 * Link header that carries the query on, counts, and a walk through every page while
 * other clients create and delete plants.
 */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { after, before, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { assertError } from '../support/assertions.js';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, type Harness } from '../support/harness.js';

const nextLink = (response: LightMyRequestResponse): string | undefined =>
  /^<([^>]+)>; rel="next"$/.exec(String(response.headers.link ?? ''))?.[1];
/** Ids as text from the raw page: JSON.parse would round those past 2^53. */
const idsOf = (body: string): string[] => [...body.matchAll(/"id":(-?\d+)/g)].map((m) => m[1] as string);

const SPECIES = [
  'Monstera deliciosa',
  'Monstera adansonii',
  'Ficus lyrata',
  'Ficus elastica',
  'Café au lait dahlia',
  'Calathea orbifolia',
  'Aloe vera',
  'Zamioculcas',
];
const TAGS = ['houseplant', 'outdoor', 'succulent'];

for (const backend of testBackends())
  describe(`finding plants over HTTP [${backend.name}]`, () => {
    let h: Harness;
    let other: Harness;
    before(async () => {
      h = await createHarness({ backend });
      other = await createHarness({ backend });
      for (let i = 0; i < 240; i++) {
        const plant = {
          id: BigInt(i * 1000 + 7),
          name: `${SPECIES[i % SPECIES.length]} ${i}`,
          tag: TAGS[i % TAGS.length],
        };
        assert.equal((await h.store.plants.createPlant(plant)).kind, 'created');
        assert.equal((await other.store.plants.createPlant(plant)).kind, 'created');
      }
    });
    after(async () => {
      await h?.close();
      await other?.close();
    });

    const get = (url: string, headers: Record<string, string> = {}, harness = h) =>
      harness.request({ method: 'GET', url, headers: { ...bearer(harness.tokens.read), ...headers } });

    async function walk(first: string, harness = h, betweenPages = async () => {}): Promise<string[]> {
      const seen: string[] = [];
      let url: string | undefined = first;
      while (url !== undefined) {
        const response = await get(url, {}, harness);
        assert.equal(response.statusCode, 200, response.body);
        seen.push(...idsOf(response.body));
        url = nextLink(response);
        await betweenPages();
      }
      return seen;
    }

    for (const [query, message] of [
      ['sort=color', /^sort must be one of 'id', '-id', 'name', '-name'$/],
      ['q=', /^q must not be empty$/],
      [`q=${'a'.repeat(201)}`, /^q must be at most 200 characters long$/],
      ['q=%21%21+-', /^q must contain at least one letter or digit$/],
      ['q=a+b+c+d+e+f+g+h+i', /^q must have at most 8 words \(it has 9\)$/],
      ['q=a%00', /^q must not contain control characters/],
      [Array.from({ length: 11 }, (_, i) => `tag=t${i}`).join('&'), /^tag must be given at most 10 times$/],
      ['tag=a&tag=', /^tag must not be empty$/],
      ['cursor=', /^cursor must not be empty$/],
      ['cursor=abc', /^cursor is not one this service made for this query/],
      ['cursor=WyIxIl0.AAAAAAAAAAAAAAAAAAAAAA', /^cursor is not one this service made for this query/],
      ['sort=name&after=5', /^after works only with sort=id/],
      ['cursor=abc&after=5', /^give cursor or after, not both$/],
    ] as const) {
      it(`GET /plants?${query.slice(0, 60)} -> 400 naming the parameter`, async () => {
        assertError(await get(`/plants?${query}`), Errors.INVALID_PARAMETER, message);
      });
    }

    it('searches names and tags by word prefix, ignoring case and accents, with every word required', async () => {
      const names = async (q: string) =>
        (JSON.parse((await get(`/plants?limit=1000&q=${encodeURIComponent(q)}`)).body) as { name: string }[]).map(
          (p) => p.name,
        );
      assert.equal((await names('mon')).length, 60);
      assert.ok((await names('DELIC')).every((name) => name.startsWith('Monstera deliciosa')));
      assert.deepEqual(await names('cafe 4'), ['Café au lait dahlia 4', 'Café au lait dahlia 44']);
      assert.equal((await names('ficus succul')).length, 20, 'a tag word matches like a name word');
      assert.deepEqual(await names('onstera'), [], 'a word is matched from its start');
    });

    it('finds and orders letters that decompose to capitals (™, ℌ, 𝐁) by their lower-case letters, as every store does', async () => {
      const own = await createHarness({ backend });
      try {
        for (const [id, name] of [
          [1n, 'Zen™ Bonsai'],
          [2n, 'ℌoya carnosa'],
          [3n, 'Hoya kerrii'],
          [4n, '𝐁egonia rex'],
          [5n, 'Aloe ™'],
        ] as const) {
          assert.equal((await own.store.plants.createPlant({ id, name })).kind, 'created');
        }
        const names = async (query: string) =>
          (JSON.parse((await get(`/plants?limit=100&${query}`, {}, own)).body) as { name: string }[]).map(
            (p) => p.name,
          );
        const found = async (q: string) => names(`sort=name&q=${encodeURIComponent(q)}`);
        assert.deepEqual(await found('zentm'), ['Zen™ Bonsai']);
        assert.deepEqual(await found('ZenT'), ['Zen™ Bonsai']);
        assert.deepEqual(await found('tm'), ['Aloe ™']);
        assert.deepEqual(await found('ho'), ['ℌoya carnosa', 'Hoya kerrii']);
        assert.deepEqual(await found('ℌoy'), ['ℌoya carnosa', 'Hoya kerrii']);
        assert.deepEqual(await found('b'), ['𝐁egonia rex', 'Zen™ Bonsai']);
        assert.deepEqual(await found('𝐁EGO'), ['𝐁egonia rex']);
        assert.deepEqual(await names('sort=name'), [
          'Aloe ™',
          '𝐁egonia rex',
          'ℌoya carnosa',
          'Hoya kerrii',
          'Zen™ Bonsai',
        ]);
        assert.deepEqual(await names('sort=-name'), [
          'Zen™ Bonsai',
          'Hoya kerrii',
          'ℌoya carnosa',
          '𝐁egonia rex',
          'Aloe ™',
        ]);
      } finally {
        await own.close();
      }
    });

    it('answers any of several tags, and combines tag, q and sort', async () => {
      const tagged = JSON.parse((await get('/plants?limit=1000&tag=outdoor&tag=succulent&tag=none')).body) as {
        tag: string;
      }[];
      assert.equal(tagged.length, 160);
      assert.ok(tagged.every((plant) => plant.tag === 'outdoor' || plant.tag === 'succulent'));
      const combined = await get('/plants?limit=1000&tag=houseplant&q=aloe&sort=-name');
      const names = (JSON.parse(combined.body) as { name: string; tag: string }[]).map((p) => p.name);
      assert.deepEqual(names, [...names].sort().reverse());
      assert.ok(names.length > 0 && names.every((name) => name.startsWith('Aloe vera')));
    });

    it('carries sort, q and every tag into the Link, whose cursor continues the same query', async () => {
      const first = await get('/plants?limit=5&sort=-name&q=ficus&tag=houseplant&tag=outdoor');
      const link = nextLink(first);
      assert.ok(link !== undefined, 'a next page');
      const next = new URL(link, 'http://x');
      assert.deepEqual(
        [
          next.searchParams.get('limit'),
          next.searchParams.get('sort'),
          next.searchParams.get('q'),
          next.searchParams.getAll('tag'),
        ],
        ['5', '-name', 'ficus', ['houseplant', 'outdoor']],
      );
      const walked = await walk('/plants?limit=5&sort=-name&q=ficus&tag=houseplant&tag=outdoor');
      const whole = idsOf((await get('/plants?limit=1000&sort=-name&q=ficus&tag=houseplant&tag=outdoor')).body);
      assert.deepEqual(walked, whole);
      assert.equal(new Set(walked).size, walked.length);
    });

    it('refuses a cursor that was altered, made by another store, or sent with another sort, q or tag', async () => {
      const link = nextLink(await get('/plants?limit=3&sort=name&q=mon')) ?? assert.fail('a next page');
      assert.equal((await get(link)).statusCode, 200);
      const cursor = new URL(link, 'http://x').searchParams.get('cursor') ?? '';
      const [payload = '', mac = ''] = cursor.split('.');
      const altered = `${Buffer.from(Buffer.from(payload, 'base64url').toString().replace(/\d/, '9')).toString('base64url')}.${mac}`;
      for (const url of [
        `/plants?limit=3&sort=name&q=mon&cursor=${altered}`,
        `/plants?limit=3&sort=name&q=mon&cursor=${cursor.slice(0, -2)}`,
        `/plants?limit=3&sort=-name&q=mon&cursor=${cursor}`,
        `/plants?limit=3&sort=name&q=monst&cursor=${cursor}`,
        `/plants?limit=3&sort=name&q=mon&tag=outdoor&cursor=${cursor}`,
      ]) {
        assertError(await get(url), Errors.INVALID_PARAMETER, /^cursor is not one this service made for this query/);
      }
      assertError(
        await get(link, {}, other),
        Errors.INVALID_PARAMETER,
        /^cursor is not one this service made for this query/,
      );
      assert.equal(
        (await get(link.replace('limit=3', 'limit=50'))).statusCode,
        200,
        'the page size may change between pages',
      );
    });

    it('counts on request: X-Total-Count and Preference-Applied, for GET and HEAD alike', async () => {
      const plain = await get('/plants?tag=succulent&limit=2');
      assert.equal(plain.headers['x-total-count'], undefined, 'counting is opt-in');
      assert.match(String(plain.headers.vary), /Prefer/);
      const exact = await get('/plants?tag=succulent&limit=2', { prefer: 'count=exact' });
      assert.deepEqual([exact.headers['x-total-count'], exact.headers['preference-applied']], ['80', 'count=exact']);
      const searched = await get('/plants?q=monstera+deli&limit=2', { prefer: 'return=minimal, count=exact' });
      assert.equal(searched.headers['x-total-count'], '30');
      const estimated = await get('/plants?limit=2', { prefer: 'count=estimated' });
      assert.deepEqual(
        [estimated.headers['x-total-count'], estimated.headers['preference-applied']],
        ['240', 'count=exact'],
        'a small store is counted exactly',
      );
      const head = await h.request({
        method: 'HEAD',
        url: '/plants?tag=succulent&limit=2',
        headers: { ...bearer(h.tokens.read), prefer: 'count=exact' },
      });
      assert.equal(head.statusCode, 200);
      assert.equal(head.body, '');
      assert.deepEqual([head.headers['x-total-count'], head.headers['preference-applied']], ['80', 'count=exact']);
      assert.equal(head.headers.link, exact.headers.link);
      const unknown = await get('/plants?limit=2', { prefer: 'count=approximately' });
      assert.equal(unknown.headers['x-total-count'], undefined, 'an unknown preference is ignored');
    });

    it('walks every page of every sort seeing each plant that exists throughout exactly once, in order, while others create and delete', async () => {
      // Between every two pages another client creates a plant and deletes an earlier
      // one; their names and tags land on both sides of every cursor.
      let round = 0;
      const churn = async () => {
        const id = BigInt(1_000_000 + round);
        await h.store.plants.createPlant({
          id,
          name: `${SPECIES[round % SPECIES.length]} churn ${round}`,
          tag: TAGS[round % TAGS.length],
        });
        if (round >= 3) assert.equal((await h.store.plants.deletePlant(id - 3n)).kind, 'deleted');
        round++;
      };
      for (const sort of ['id', '-id', 'name', '-name']) {
        for (const query of ['', '&q=monstera', '&tag=houseplant&tag=outdoor']) {
          const walked = await walk(`/plants?limit=7&sort=${sort}${query}`, h, churn);
          assert.equal(new Set(walked).size, walked.length, `sort=${sort}${query}: a plant seen twice`);
          const stable = walked.filter((id) => BigInt(id) < 1_000_000n);
          const expected = idsOf((await get(`/plants?limit=1000&sort=${sort}${query}`)).body).filter(
            (id) => BigInt(id) < 1_000_000n,
          );
          assert.deepEqual(
            stable,
            expected,
            `sort=${sort}${query}: the plants that exist throughout, once each, in order`,
          );
        }
      }
      assert.ok(round > 100, `the walks ran beside ${round} creates and deletes`);
    });
  });
