import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { assertError } from '../support/assertions.js';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, postPlant, type Harness } from '../support/harness.js';

for (const backend of testBackends())
  describe(`POST /plants [${backend.name}]`, () => {
    let h: Harness;
    before(async () => {
      h = await createHarness({ backend });
    });
    after(() => h.close());

    const getRaw = async (id: string) =>
      h.request({ method: 'GET', url: `/plants/${id}`, headers: bearer(h.tokens.read) });

    describe('success', () => {
      it('answers 200 (not 201) with exactly {name, tag}', async () => {
        const response = await postPlant(h, '{"id": 1, "name": "Monstera", "tag": "houseplant"}');
        assert.equal(response.statusCode, 200);
        assert.equal(response.body, '{"name":"Monstera","tag":"houseplant"}');
      });

      it('omits tag (never null) when the plant has none, and never returns the id', async () => {
        const response = await postPlant(h, '{"id": 2, "name": "Fern"}');
        assert.equal(response.statusCode, 200);
        assert.equal(response.body, '{"name":"Fern"}');
      });

      it('ignores unknown properties: not echoed, not stored', async () => {
        const response = await postPlant(
          h,
          '{"id": 3, "name": "Aloe", "colour": "green", "nested": {"a": [1, 2]}, "status": null}',
        );
        assert.equal(response.statusCode, 200);
        assert.equal(response.body, '{"name":"Aloe"}');
        assert.deepEqual((await getRaw('3')).json(), { id: 3, name: 'Aloe' });
      });

      it('accepts names and tags at their maximum length, in code points', async () => {
        const name = '🌵'.repeat(200);
        const response = await postPlant(h, JSON.stringify({ id: 4, name, tag: 'x'.repeat(100) }));
        assert.equal(response.statusCode, 200);
        assert.equal(response.json().name, name);
      });
    });

    describe('int64 ids', () => {
      const exact = [
        ['the smallest int64', '-9223372036854775808'],
        ['the largest int64', '9223372036854775807'],
        ['2^53 + 1', '9007199254740993'],
        ['-(2^53 + 1)', '-9007199254740993'],
        ['2^53 - 1', '9007199254740991'],
        ['zero', '0'],
      ] as const;
      for (const [label, id] of exact) {
        it(`stores and returns ${label} (${id}) with every digit exact`, async () => {
          const response = await postPlant(h, `{"id": ${id}, "name": "n${id}"}`);
          assert.equal(response.statusCode, 200, response.body);
          const read = await getRaw(id);
          assert.equal(read.body, `{"id":${id},"name":"n${id}"}`);
        });
      }

      it('treats integral numbers written with an exponent or .0 as the integers they are', async () => {
        assert.equal((await postPlant(h, '{"id": 1.2e3, "name": "exp"}')).statusCode, 200);
        assert.deepEqual((await getRaw('1200')).json(), { id: 1200, name: 'exp' });
        assert.equal((await postPlant(h, '{"id": 9007199254740995.0, "name": "dotzero"}')).statusCode, 200);
        assert.equal((await getRaw('9007199254740995')).body, '{"id":9007199254740995,"name":"dotzero"}');
      });

      const invalid = [
        ['2^63', '9223372036854775808', /out of range/],
        ['-2^63 - 1', '-9223372036854775809', /out of range/],
        ['10^400', '1e400', /out of range/],
        ['a fraction', '1.5', /int64/],
        ['a fraction next to 2^53', '9007199254740993.5', /int64/],
        ['a tiny fraction that rounds to zero', '1e-400', /int64/],
        ['a string', '"1"', /int64/],
        ['a boolean', 'true', /int64/],
        ['null', 'null', /int64/],
        ['an object', '{"value": 1}', /int64/],
      ] as const;
      for (const [label, id, reason] of invalid) {
        it(`rejects ${label} with 400 naming id`, async () => {
          const body = assertError(await postPlant(h, `{"id": ${id}, "name": "bad"}`), Errors.INVALID_FIELD, /^id /);
          assert.match(body.message, reason);
        });
      }

      it('rejects a missing id with 400 naming id', async () => {
        assertError(await postPlant(h, '{"name": "no id"}'), Errors.INVALID_FIELD, 'id is required');
      });
    });

    describe('name and tag', () => {
      const cases = [
        ['a missing name', '{"id": 50}', 'name is required'],
        ['a numeric name', '{"id": 50, "name": 7}', 'name must be a string'],
        ['an empty name', '{"id": 50, "name": ""}', 'name must not be empty'],
        [
          'a name over 200 characters',
          JSON.stringify({ id: 50, name: 'x'.repeat(201) }),
          'name must be at most 200 characters',
        ],
        [
          'a tag over 100 characters',
          JSON.stringify({ id: 50, name: 'ok', tag: 'x'.repeat(101) }),
          'tag must be at most 100 characters',
        ],
        ['a null tag', '{"id": 50, "name": "ok", "tag": null}', 'tag must be a string'],
        ['a NUL byte in a name', '{"id": 50, "name": "a\\u0000b"}', 'name must not contain control characters'],
        ['an unpaired surrogate in a tag', '{"id": 50, "name": "ok", "tag": "\\ud800"}', 'tag must not contain'],
      ] as const;
      for (const [label, body, message] of cases) {
        it(`rejects ${label} with 400`, async () => {
          assertError(await postPlant(h, body), Errors.INVALID_FIELD, message);
        });
      }

      it('names every invalid field at once', async () => {
        const body = assertError(await postPlant(h, '{"id": "x", "name": 1, "tag": false}'), Errors.INVALID_FIELD);
        for (const field of ['id ', 'name ', 'tag ']) assert.ok(body.message.includes(field), body.message);
      });
    });

    describe('existing ids', () => {
      it('answers a retry with the same content 200 and the same body, changing nothing', async () => {
        const first = await postPlant(h, '{"id": 100, "name": "Ficus", "tag": "tree"}');
        const again = await postPlant(h, '{"id": 100, "name": "Ficus", "tag": "tree", "ignored": true}');
        assert.equal(first.statusCode, 200);
        assert.equal(again.statusCode, 200);
        assert.equal(again.body, first.body);
      });

      it('answers different content 409 with an Error record, keeping the stored plant', async () => {
        await postPlant(h, '{"id": 101, "name": "Basil", "tag": "herb"}');
        assertError(await postPlant(h, '{"id": 101, "name": "Basil"}'), Errors.PLANT_CONFLICT, '101');
        assertError(await postPlant(h, '{"id": 101, "name": "Mint", "tag": "herb"}'), Errors.PLANT_CONFLICT);
        assert.deepEqual((await getRaw('101')).json(), { id: 101, name: 'Basil', tag: 'herb' });
      });
    });
  });
