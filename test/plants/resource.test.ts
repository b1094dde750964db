import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { assertError } from '../support/assertions.js';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, postPlant, type Harness } from '../support/harness.js';

const TWO_53 = 2n ** 53n;

/** A few thousand ids: negatives, a run straddling 2^53, and the int64 extremes. */
function sampleIds(): bigint[] {
  const ids = new Set<bigint>([-(2n ** 63n), 2n ** 63n - 1n, 0n]);
  for (let i = 0n; i < 1500n; i++) ids.add(-1_000_000n + i * 7n);
  for (let i = -750n; i < 750n; i++) ids.add(TWO_53 + i);
  for (let i = 0n; i < 500n; i++) ids.add(i * 1_000_003n);
  return [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

for (const backend of testBackends())
  describe(`the plant resource [${backend.name}]`, () => {
    let h: Harness;
    const ids = sampleIds();
    const tagOf = (id: bigint) => (id % 3n === 0n ? 'fern' : undefined);

    before(async () => {
      h = await createHarness({ backend });
      for (const id of ids) {
        const tag = tagOf(id);
        await h.store.plants.createPlant(tag === undefined ? { id, name: `p${id}` } : { id, name: `p${id}`, tag });
      }
    });
    after(() => h.close());

    const get = (url: string, token = h.tokens.read) => h.request({ method: 'GET', url, headers: bearer(token) });

    /** Follows Link rel="next" from `first` to the end; returns every id seen, as text. */
    async function walk(first: string): Promise<{ ids: string[]; pages: number }> {
      const seen: string[] = [];
      let url: string | undefined = first;
      let pages = 0;
      while (url !== undefined) {
        const response = await get(url);
        assert.equal(response.statusCode, 200, response.body);
        // Read ids from the raw text: JSON.parse would round those above 2^53.
        seen.push(...[...response.body.matchAll(/"id":(-?\d+)/g)].map((m) => m[1] as string));
        const link = response.headers.link as string | undefined;
        url = link === undefined ? undefined : /^<([^>]+)>; rel="next"$/.exec(link)?.[1];
        pages++;
      }
      return { ids: seen, pages };
    }

    for (const limit of [1, 7, 100, 999, 1000]) {
      it(`walks all ${ids.length} plants at limit=${limit} in id order with no gap or repeat`, async () => {
        if (limit === 1) {
          // One-per-page over thousands of requests is slow; walk a slice of it.
          const { ids: seen } = await walk(`/plants?limit=1&after=${TWO_53 - 20n}`);
          assert.deepEqual(seen, ids.filter((id) => id > TWO_53 - 20n).map(String));
          return;
        }
        const { ids: seen, pages } = await walk(`/plants?limit=${limit}`);
        assert.deepEqual(seen, ids.map(String));
        assert.equal(pages, Math.ceil(ids.length / limit) + (ids.length % limit === 0 ? 1 : 0));
      });
    }

    it('uses a default page of 100 and announces the next page with a Link header', async () => {
      const response = await get('/plants');
      const page = response.body.match(/"id":/g) ?? [];
      assert.equal(page.length, 100);
      assert.match(
        String(response.headers.link),
        /^<\/plants\?limit=100&cursor=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+>; rel="next"$/,
      );
      const next = await get(/^<([^>]+)>; rel="next"$/.exec(String(response.headers.link))?.[1] ?? '');
      assert.equal(next.statusCode, 200);
      assert.equal(/"id":(-?\d+)/.exec(next.body)?.[1], String(ids[100]));
    });

    it('filters by exact tag, paginating within the tag', async () => {
      const { ids: seen } = await walk('/plants?tag=fern&limit=250');
      assert.deepEqual(seen, ids.filter((id) => tagOf(id) === 'fern').map(String));
      const none = await get('/plants?tag=Fern');
      assert.equal(none.body, '[]');
      assert.equal(none.headers.link, undefined);
    });

    it('returns plants as {id, name, tag} with exact int64 ids and no null tags', async () => {
      const response = await get(`/plants?limit=2&after=${2n ** 63n - 3n}`);
      assert.equal(response.body, `[{"id":9223372036854775807,"name":"p9223372036854775807"}]`);
      const first = await get('/plants?limit=1');
      assert.equal(first.body, '[{"id":-9223372036854775808,"name":"p-9223372036854775808"}]');
      const tagged = await get('/plants/0');
      assert.deepEqual(tagged.json(), { id: 0, name: 'p0', tag: 'fern' });
    });

    for (const [query, message] of [
      ['limit=0', /^limit must be at least 1$/],
      ['limit=-5', /^limit must be at least 1$/],
      ['limit=1.5', /limit must be an integer/],
      // Ajv's coercion alone would take each of these for a number.
      ['limit=0x10', /^limit must be an integer$/],
      ['limit=1e2', /^limit must be an integer$/],
      ['limit=1.0', /^limit must be an integer$/],
      ['limit=%201', /^limit must be an integer$/],
      ['limit=+5', /^limit must be an integer$/],
      ['limit=010', /^limit must be an integer$/],
      ['limit=ten', /limit must be an integer/],
      ['limit=1001', /^limit must be at most 1000$/],
      ['limit=99999999999', /limit/],
      ['after=9223372036854775808', /after must be an integer .* out of range/],
      ['after=1.5', /after must be an integer/],
      ['after=007', /after must be an integer .* write it in plain decimal, without leading zeros/],
      ['after=-0', /after must be an integer .* write it in plain decimal, without leading zeros/],
      ['after=', /after/],
      ['tag=', /tag must not be empty/],
      // Not UTF-8 once decoded: refused, not matched as if it meant something.
      ['tag=%FF', /^tag must be valid percent-encoded UTF-8$/],
      ['tag=%E2%82', /^tag must be valid percent-encoded UTF-8$/],
      ['tag=fern%', /^tag must be valid percent-encoded UTF-8$/],
      ['limit=1&limit=2', /^limit is given more than once$/],
      ['after=1&after=2', /^after is given more than once$/],
      ['q=a&limit=5&q=a', /^q is given more than once$/],
      ['%71=a&q=b', /^q is given more than once$/],
      ['sort=id&sort=name', /^sort is given more than once$/],
      ['cursor=x&cursor=y', /^cursor is given more than once$/],
    ] as const) {
      it(`GET /plants?${query} -> 400 naming the parameter`, async () => {
        assertError(await get(`/plants?${query}`), Errors.INVALID_PARAMETER, message);
      });
    }

    it('GET /plants takes percent-encoded UTF-8 and ignores parameters it does not know, even repeated', async () => {
      const fresh = await createHarness({ backend });
      try {
        assert.equal(
          (await postPlant(fresh, '{"id": 1, "name": "Zebra plant", "tag": "tropical · shade"}')).statusCode,
          200,
        );
        const listed = await fresh.request({
          method: 'GET',
          url: '/plants?tag=tropical%20%C2%B7+shade&x=1&x=%FF',
          headers: bearer(fresh.tokens.read),
        });
        assert.equal(listed.statusCode, 200, listed.body);
        assert.deepEqual(listed.json(), [{ id: 1, name: 'Zebra plant', tag: 'tropical · shade' }]);
      } finally {
        await fresh.close();
      }
    });

    it('GET /plants/{id} answers 404 for a missing plant and 400 for a bad id', async () => {
      assertError(await get('/plants/12345'), Errors.PLANT_NOT_FOUND, '12345');
      for (const bad of ['abc', '1.5', '9223372036854775808', '-9223372036854775809', '01', '1e3', '%20']) {
        assertError(await get(`/plants/${bad}`), Errors.INVALID_PARAMETER, /^id must be an integer/);
      }
    });

    it('round-trips the smallest and largest int64 through create -> get -> list -> delete', async () => {
      const fresh = await createHarness({ backend });
      try {
        for (const id of ['-9223372036854775808', '9223372036854775807']) {
          assert.equal(
            (await postPlant(fresh, `{"id": ${id}, "name": "edge", "tag": "t"}`)).body,
            '{"name":"edge","tag":"t"}',
          );
          assert.equal(
            (await fresh.request({ method: 'GET', url: `/plants/${id}`, headers: bearer(fresh.tokens.read) })).body,
            `{"id":${id},"name":"edge","tag":"t"}`,
          );
        }
        const listed = await fresh.request({ method: 'GET', url: '/plants', headers: bearer(fresh.tokens.read) });
        assert.equal(
          listed.body,
          '[{"id":-9223372036854775808,"name":"edge","tag":"t"},{"id":9223372036854775807,"name":"edge","tag":"t"}]',
        );
        for (const id of ['-9223372036854775808', '9223372036854775807']) {
          const deleted = await fresh.request({
            method: 'DELETE',
            url: `/plants/${id}`,
            headers: bearer(fresh.tokens.write),
          });
          assert.equal(deleted.statusCode, 204);
          assert.equal(deleted.body, '');
          assertError(
            await fresh.request({ method: 'GET', url: `/plants/${id}`, headers: bearer(fresh.tokens.read) }),
            Errors.PLANT_NOT_FOUND,
          );
        }
      } finally {
        await fresh.close();
      }
    });

    it('DELETE answers 404 for a missing plant and 400 for a bad id; a deleted id can be created afresh', async () => {
      const del = (id: string) =>
        h.request({ method: 'DELETE', url: `/plants/${id}`, headers: bearer(h.tokens.write) });
      assertError(await del('777777'), Errors.PLANT_NOT_FOUND, '777777');
      assertError(await del('seven'), Errors.INVALID_PARAMETER, /^id /);
      assert.equal((await postPlant(h, '{"id": 777777, "name": "first", "tag": "a"}')).statusCode, 200);
      assert.equal((await del('777777')).statusCode, 204);
      assertError(await del('777777'), Errors.PLANT_NOT_FOUND);
      const recreated = await postPlant(h, '{"id": 777777, "name": "second"}');
      assert.equal(recreated.statusCode, 200, 'a fresh create, not a 409 against the deleted plant');
      assert.deepEqual((await get('/plants/777777')).json(), { id: 777777, name: 'second' });
    });

    it('enforces scopes: a read-only token lists and reads but cannot create or delete; a write-only token cannot read', async () => {
      assert.equal((await get('/plants?limit=1')).statusCode, 200);
      assert.equal((await get('/plants/0')).statusCode, 200);
      assertError(
        await postPlant(h, '{"id": 31, "name": "x"}', h.tokens.read),
        Errors.INSUFFICIENT_SCOPE,
        'plants:write',
      );
      assertError(
        await h.request({ method: 'DELETE', url: '/plants/0', headers: bearer(h.tokens.read) }),
        Errors.INSUFFICIENT_SCOPE,
        'plants:write',
      );
      assertError(await get('/plants', h.tokens.write), Errors.INSUFFICIENT_SCOPE, 'plants:read');
      assertError(await get('/plants/0', h.tokens.write), Errors.INSUFFICIENT_SCOPE, 'plants:read');
      assertError(await h.request({ method: 'GET', url: '/plants' }), Errors.TOKEN_MISSING);
      assertError(await h.request({ method: 'DELETE', url: '/plants/0' }), Errors.TOKEN_MISSING);
    });
  });
