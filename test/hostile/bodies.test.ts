/**
 * Hostile JSON bodies, sent over a real socket exactly as written (bytes, not
 * re-encoded): deep nesting, huge numbers, exponents, duplicate keys, prototype
 * keys, invalid UTF-8, lone surrogates, NUL bytes. Each gets a defined answer:
 * 200 for what is valid (unknown keys ignored), else a 400 Error record naming
 * the problem; none gets a 5xx, and the server stays up.
 */
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { assertErrorRecord, listeningHarness, type ListeningHarness } from './listening.js';
import { rawExchange } from './raw-http.js';

interface Answer {
  readonly status: number;
  readonly body: string;
}

describe('hostile JSON bodies', () => {
  let h: ListeningHarness;
  before(async () => {
    h = await listeningHarness();
  });
  after(() => h.close());

  async function post(body: string | Buffer): Promise<Answer> {
    const response = await fetch(`${h.url}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.tokens.write}`, 'content-type': 'application/json' },
      body,
      signal: AbortSignal.timeout(10_000),
    });
    return { status: response.status, body: await response.text() };
  }

  async function stored(id: string): Promise<string> {
    const response = await fetch(`${h.url}/plants/${id}`, { headers: { authorization: `Bearer ${h.tokens.read}` } });
    return `${response.status} ${await response.text()}`;
  }

  const bytes = (...parts: (string | number[])[]) =>
    Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'utf8') : Buffer.from(part))));

  describe('codings the service does not apply', () => {
    const send = (headers: Record<string, string>, body: Buffer | string) =>
      fetch(`${h.url}/plants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${h.tokens.write}`, 'content-type': 'application/json', ...headers },
        body,
        signal: AbortSignal.timeout(10_000),
      });

    it('a Content-Encoding other than identity gets 415 naming it, with Accept-Encoding: identity, and nothing stored', async () => {
      const json = '{"id": 4401, "name": "zipped"}';
      for (const [encoding, body] of [
        ['gzip', gzipSync(json)],
        ['gzip', json],
        ['br', json],
        ['GZIP, identity', json],
      ] as const) {
        const response = await send({ 'content-encoding': encoding }, body);
        const answer = { status: response.status, body: await response.text() };
        assertErrorRecord(answer, Errors.UNSUPPORTED_MEDIA_TYPE);
        assert.match(answer.body, /content-encoding/i, encoding);
        assert.equal(response.headers.get('accept-encoding'), 'identity');
      }
      assert.equal(await stored('4401'), `404 {"error":40402,"message":"no plant has id 4401"}`);
      const plain = await send({ 'content-encoding': 'identity' }, json);
      assert.equal(plain.status, 200, await plain.text());
    });

    it('a transfer coding other than chunked gets 400 naming it (Node would decode only the chunking), nothing stored', async () => {
      const body = '{"id": 4402, "name": "coded"}';
      const request =
        `POST /plants HTTP/1.1\r\nhost: x\r\nconnection: close\r\nauthorization: Bearer ${h.tokens.write}\r\n` +
        `content-type: application/json\r\ntransfer-encoding: gzip, chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
      const answer = await rawExchange(h.url, request);
      assertErrorRecord(answer, Errors.BAD_REQUEST);
      assert.match(answer.body, /transfer coding/);
      assert.equal(await stored('4402'), `404 {"error":40402,"message":"no plant has id 4402"}`);
    });
  });

  describe('deep nesting', () => {
    it('30,000 nested arrays in an unknown field: parsed without a stack overflow and ignored', async () => {
      const deep = '['.repeat(30_000) + ']'.repeat(30_000);
      assert.deepEqual(await post(`{"id": 101, "name": "deep", "extra": ${deep}}`), {
        status: 200,
        body: '{"name":"deep"}',
      });
    });

    it('30,000 nested arrays on the lossless path (a 16-digit number present): 400 INVALID_JSON, not a crash', async () => {
      const deep = '['.repeat(30_000) + ']'.repeat(30_000);
      const answer = await post(`{"id": 1234567890123456, "name": "deep", "extra": ${deep}}`);
      assertErrorRecord(answer, Errors.INVALID_JSON);
      assert.match(answer.body, /nested too deeply/);
      assert.equal((await post('{"id": 102, "name": "still up"}')).status, 200);
    });
  });

  describe('numbers', () => {
    for (const literal of [
      '1e400',
      '-1e400',
      `1${'0'.repeat(400)}`,
      '9223372036854775808',
      '-9223372036854775809',
      '9.223372036854775808e18',
    ]) {
      it(`id ${literal.length > 30 ? `${literal.slice(0, 12)}... (${literal.length} digits)` : literal}: 400 INVALID_FIELD, out of the int64 range`, async () => {
        const answer = await post(`{"id": ${literal}, "name": "huge"}`);
        assertErrorRecord(answer, Errors.INVALID_FIELD);
        assert.match(answer.body, /id/);
      });
    }

    for (const literal of ['1e-400', '1.5', '1e999999999999', '-0.5e0', 'NaN', 'Infinity', '0x10', '+1', '01']) {
      it(`id ${literal}: a 400, never rounded into an acceptable id`, async () => {
        const answer = await post(`{"id": ${literal}, "name": "not an integer"}`);
        assert.equal(answer.status, 400, answer.body);
        assert.ok(
          ([Errors.INVALID_FIELD.code, Errors.INVALID_JSON.code] as number[]).includes(
            (JSON.parse(answer.body) as { error: number }).error,
          ),
        );
      });
    }

    for (const [literal, id] of [
      ['1e2', '100'],
      ['1E+3', '1000'],
      ['0.1e1', '1'],
      ['15e-1', '15e-1'],
      ['2.5e1', '25'],
      ['9.223372036854775807e18', '9223372036854775807'],
      ['-9.223372036854775808E18', '-9223372036854775808'],
    ] as const) {
      it(`id ${literal}: an integer written with an exponent is that integer exactly`, async () => {
        const answer = await post(`{"id": ${literal}, "name": "exp ${literal}"}`);
        if (id === '15e-1') {
          assertErrorRecord(answer, Errors.INVALID_FIELD); // 1.5 is not an integer
          return;
        }
        assert.deepEqual(answer, { status: 200, body: `{"name":"exp ${literal}"}` });
        assert.equal(await stored(id), `200 {"id":${id},"name":"exp ${literal}"}`);
      });
    }
  });

  describe('keys', () => {
    it('duplicate keys: the last one wins, on both parser paths', async () => {
      assert.equal((await post('{"id": 201, "id": 202, "name": "first", "name": "last"}')).status, 200);
      assert.equal(await stored('202'), '200 {"id":202,"name":"last"}');
      assert.equal(
        await stored('201'),
        `404 ${JSON.stringify({ error: Errors.PLANT_NOT_FOUND.code, message: 'no plant has id 201' })}`,
      );
      assert.equal(
        (await post('{"id": 1234567890123456, "id": 203, "name": "first", "name": "lossless last"}')).status,
        200,
      );
      assert.equal(await stored('203'), '200 {"id":203,"name":"lossless last"}');
    });

    for (const [path, id] of [
      ['fast', '301'],
      ['lossless', '3012345678901234'],
    ] as const) {
      it(`__proto__ and constructor keys are ignored and pollute nothing (${path} parser path)`, async () => {
        const body =
          `{"id": ${id}, "name": "proto", "__proto__": {"tag": "polluted", "polluted": true}, ` +
          `"constructor": {"prototype": {"polluted": true, "tag": "polluted"}}}`;
        assert.deepEqual(await post(body), { status: 200, body: '{"name":"proto"}' });
        assert.equal(await stored(id), `200 {"id":${id},"name":"proto"}`);
        // The server runs in this process: its prototypes are ours.
        assert.equal(({} as Record<string, unknown>).polluted, undefined);
        assert.equal(({} as Record<string, unknown>).tag, undefined);
        assert.equal((Object.prototype as Record<string, unknown>).polluted, undefined);
      });
    }

    it('a __proto__ tag that is not an object is ignored too', async () => {
      assert.deepEqual(await post('{"id": 302, "name": "p", "__proto__": "x", "tag": "real"}'), {
        status: 200,
        body: '{"name":"p","tag":"real"}',
      });
    });
  });

  describe('text', () => {
    const invalidUtf8: [string, number[]][] = [
      ['a 0xFF byte', [0xff]],
      ['an overlong "/" (C0 AF)', [0xc0, 0xaf]],
      ['a UTF-8 encoded surrogate (ED A0 80)', [0xed, 0xa0, 0x80]],
      ['a truncated sequence (E2 82)', [0xe2, 0x82]],
      ['a code point above U+10FFFF (F4 90 80 80)', [0xf4, 0x90, 0x80, 0x80]],
    ];
    for (const [what, sequence] of invalidUtf8) {
      it(`invalid UTF-8, ${what}: 400 INVALID_JSON`, async () => {
        const answer = await post(bytes('{"id": 401, "name": "bad ', sequence, '"}'));
        assertErrorRecord(answer, Errors.INVALID_JSON);
        assert.match(answer.body, /UTF-8/);
      });
    }

    for (const escaped of ['\\ud800', '\\udfff', 'x\\udc00y', '\\ud83c']) {
      it(`a lone surrogate (${escaped}) in a name: 400 INVALID_FIELD (it could not be stored as UTF-8)`, async () => {
        assertErrorRecord(await post(`{"id": 402, "name": "${escaped}"}`), Errors.INVALID_FIELD);
      });
    }

    it('a proper surrogate pair is a character like any other', async () => {
      assert.deepEqual(await post('{"id": 403, "name": "\\ud83c\\udf35"}'), { status: 200, body: '{"name":"🌵"}' });
      assert.equal(await stored('403'), '200 {"id":403,"name":"🌵"}');
    });

    it('NUL: escaped in a name or tag is 400 INVALID_FIELD; a raw NUL byte is 400 INVALID_JSON; as a path id or tag filter 400 INVALID_PARAMETER', async () => {
      assertErrorRecord(await post('{"id": 404, "name": "a\\u0000b"}'), Errors.INVALID_FIELD);
      assertErrorRecord(await post('{"id": 404, "name": "a", "tag": "\\u0000"}'), Errors.INVALID_FIELD);
      assertErrorRecord(await post(bytes('{"id": 404, "name": "a', [0], 'b"}')), Errors.INVALID_JSON);
      assertErrorRecord(await post(bytes('{"id": 404,', [0], '"name": "a"}')), Errors.INVALID_JSON);
      const get = async (path: string) => {
        const response = await fetch(`${h.url}${path}`, { headers: { authorization: `Bearer ${h.tokens.read}` } });
        return { status: response.status, body: await response.text() };
      };
      assertErrorRecord(await get('/plants/%00'), Errors.INVALID_PARAMETER);
      // As a tag filter too: no stored tag can hold one, and PostgreSQL could not even compare it.
      assertErrorRecord(await get('/plants?tag=%00'), Errors.INVALID_PARAMETER);
      assert.equal(
        await stored('404'),
        `404 ${JSON.stringify({ error: Errors.PLANT_NOT_FOUND.code, message: 'no plant has id 404' })}`,
      );
    });

    it('a NUL inside an unknown key is just another unknown key', async () => {
      assert.deepEqual(await post('{"id": 405, "name": "n", "\\u0000": 1}'), { status: 200, body: '{"name":"n"}' });
    });

    it('a byte-order mark before the JSON: 400 INVALID_JSON (RFC 8259 forbids it)', async () => {
      assertErrorRecord(await post(bytes([0xef, 0xbb, 0xbf], '{"id": 406, "name": "bom"}')), Errors.INVALID_JSON);
    });
  });
});
