/**
 * Attacks on the HTTP layer, over real sockets: huge declared and streamed
 * bodies, header floods, slow clients (slowloris), bytes that are not HTTP.
 * Each gets a quick, catalogued Error record, and the server stays responsive.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { assertErrorRecord, listeningHarness, type ListeningHarness } from './listening.js';
import { head, RawConnection, rawExchange } from './raw-http.js';
import { unversioned } from '../support/assertions.js';

const HEADERS_TIMEOUT_MS = 1000;
const REQUEST_TIMEOUT_MS = 2000;

describe('protocol-level attacks', () => {
  let h: ListeningHarness;
  before(async () => {
    h = await listeningHarness({
      env: {
        HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
        REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
        LINGER_TIMEOUT_MS: '1000',
      },
    });
  });
  after(() => h.close());

  const postHead = (extra: Record<string, string>) =>
    `POST /plants HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${h.tokens.write}\r\ncontent-type: application/json\r\n` +
    Object.entries(extra)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('') +
    '\r\n';

  it('a declared 1 GB body is refused at once with 413, without reading it, and the connection closed', async () => {
    const connection = await RawConnection.open(h.url);
    const started = Date.now();
    await connection.write(postHead({ 'content-length': String(1024 ** 3) }) + '{"id": 1, ');
    const response = await connection.response(5000);
    assertErrorRecord(response, Errors.BODY_TOO_LARGE);
    assert.equal(response.headers.connection, 'close');
    await connection.closedWithin(2000);
    // Fast means "did not wait for the body": far below what even a fast link needs for 1 GB.
    assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
  });

  it('a chunked body that grows past the limit gets 413, and the connection is closed once LINGER_TIMEOUT_MS has passed without its end', async () => {
    const connection = await RawConnection.open(h.url);
    await connection.write(postHead({ 'transfer-encoding': 'chunked' }));
    const chunk = `4000\r\n${'a'.repeat(0x4000)}\r\n`; // 16 KiB per chunk, the limit is 64 KiB
    for (let i = 0; i < 64 && (await connection.write(chunk)); i++) {
      if (connection.isClosed) break;
    }
    const response = await connection.response(5000);
    assertErrorRecord(response, Errors.BODY_TOO_LARGE);
    await connection.closedWithin(3000);
  });

  it('10,000 headers get 431 HEADERS_TOO_LARGE (an Error record, not a bare status)', async () => {
    const headers = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`x-h${i}`, 'v']));
    assertErrorRecord(await rawExchange(h.url, head('GET', '/healthz', headers)), Errors.HEADERS_TOO_LARGE);
  });

  it('a 1 MB header gets 431 HEADERS_TOO_LARGE', async () => {
    const response = await rawExchange(
      h.url,
      head('GET', '/plants', { authorization: `Bearer ${'a'.repeat(1024 * 1024)}` }),
    );
    assertErrorRecord(response, Errors.HEADERS_TOO_LARGE);
    assert.equal(response.headers['content-type'], 'application/json; charset=utf-8');
  });

  it('bytes that are not HTTP get 400 BAD_REQUEST', async () => {
    for (const garbage of [
      '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n',
      'GET / HTTP/9.9\r\n\r\n',
      'GET /healthz HTTP/1.1\r\nhost: x\r\nbad header\r\n\r\n',
      'GET /healthz HTTP/1.1\r\nx-nul: a\x00b\r\n\r\n',
    ]) {
      assertErrorRecord(await rawExchange(h.url, garbage), Errors.BAD_REQUEST);
    }
  });

  it('conflicting Content-Length and Transfer-Encoding (request smuggling) gets 400', async () => {
    const request = postHead({ 'content-length': '5', 'transfer-encoding': 'chunked' }) + '0\r\n\r\n';
    assertErrorRecord(await rawExchange(h.url, request), Errors.BAD_REQUEST);
  });

  it('an Expect header other than 100-continue is ignored (RFC 9110 allows it), not answered with a bare 417', async () => {
    for (const expect of ['', 'something-else', 'x-100-continued']) {
      const response = await rawExchange(h.url, head('GET', '/healthz', { expect }));
      assert.deepEqual(
        { status: response.status, body: response.body },
        { status: 200, body: '{"status":"ok"}' },
        `Expect: ${expect}`,
      );
    }
    const response = await rawExchange(
      h.url,
      postHead({ expect: 'x-custom', 'content-length': '31' }) + '{"id": 501, "name": "expected"}',
    );
    assert.deepEqual({ status: response.status, body: response.body }, { status: 200, body: '{"name":"expected"}' });
  });

  it('Expect: 100-continue gets 100 only for a body the service will read: not before a 401 or a 413, and the body then stored', async () => {
    /** The bytes the server sends within `ms` of the head (a 100 would come at once). */
    const firstAnswer = async (connection: RawConnection, ms: number) => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return (connection as unknown as { buffer: Buffer }).buffer.toString('latin1');
    };
    const body = '{"id":77003,"name":"continued"}';
    const expectHead = (auth: string, length: number) =>
      `POST /plants HTTP/1.1\r\nhost: x\r\nconnection: close\r\n${auth}content-type: application/json\r\n` +
      `content-length: ${length}\r\nexpect: 100-continue\r\n\r\n`;

    const anonymous = await RawConnection.open(h.url);
    await anonymous.write(expectHead('', body.length));
    const refused = await firstAnswer(anonymous, 300);
    anonymous.destroy();
    assert.match(refused, /^HTTP\/1\.1 401 /, 'the 401 comes first, with no 100 before it');

    const oversized = await RawConnection.open(h.url);
    await oversized.write(expectHead(`authorization: Bearer ${h.tokens.write}\r\n`, h.config.bodyLimitBytes + 1));
    const tooLarge = await firstAnswer(oversized, 300);
    oversized.destroy();
    assert.match(tooLarge, /^HTTP\/1\.1 413 /, 'the 413 comes first, with no 100 before it');

    const welcome = await RawConnection.open(h.url);
    try {
      await welcome.write(expectHead(`authorization: Bearer ${h.tokens.write}\r\n`, body.length));
      assert.match(await firstAnswer(welcome, 300), /^HTTP\/1\.1 100 Continue\r\n\r\n$/);
      await welcome.write(body);
      await welcome.closed;
      assert.match(
        (welcome as unknown as { buffer: Buffer }).buffer.toString('latin1'),
        /HTTP\/1\.1 200 OK[\s\S]*\{"name":"continued"\}$/,
      );
    } finally {
      welcome.destroy();
    }
    assert.deepEqual(unversioned(await h.store.plants.getPlant(77003n)), { id: 77003n, name: 'continued' });
  });

  it('CONNECT (this is not a proxy) gets a 400 Error record instead of a silent close', async () => {
    assertErrorRecord(
      await rawExchange(h.url, 'CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n'),
      Errors.BAD_REQUEST,
    );
  });

  it('an HTTP/1.1 request without Host gets a 400 Error record naming it (RFC 9112 3.2); HTTP/1.0 needs none', async () => {
    const response = await rawExchange(h.url, 'GET /healthz HTTP/1.1\r\nconnection: close\r\n\r\n');
    assertErrorRecord(response, Errors.BAD_REQUEST);
    assert.match(response.body, /Host header/);
    assert.equal(response.headers['x-content-type-options'], 'nosniff');
    const old = await rawExchange(h.url, 'GET /healthz HTTP/1.0\r\n\r\n');
    assert.deepEqual({ status: old.status, body: old.body }, { status: 200, body: '{"status":"ok"}' });
    const body = '{"id":90210,"name":"nohost"}';
    const nothingStored = await rawExchange(
      h.url,
      'POST /plants HTTP/1.1\r\nconnection: close\r\n' +
        `authorization: Bearer ${h.tokens.write}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
    );
    assertErrorRecord(nothingStored, Errors.BAD_REQUEST);
    assert.equal(await h.store.plants.getPlant(90210n), undefined);
  });

  it('several Host headers or an invalid Host value get 400 naming it (RFC 9112 3.2), before anything is stored or rate-limited', async () => {
    const body = '{"id":90211,"name":"badhost"}';
    const post = (hostLines: string) =>
      `POST /plants HTTP/1.1\r\n${hostLines}connection: close\r\n` +
      `authorization: Bearer ${h.tokens.write}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
    for (const [hostLines, message] of [
      ['host: a.example\r\nhost: b.example\r\n', /exactly one Host header/],
      ['host: a.example\r\nHost: a.example\r\n', /exactly one Host header/],
      ['host: exa mple.com\r\n', /Host header .*not a valid host/],
      ['host: a.example/path\r\n', /Host header .*not a valid host/],
      ['host: user@a.example\r\n', /Host header .*not a valid host/],
      ['host: a.example:80x\r\n', /Host header .*not a valid host/],
    ] as const) {
      const response = await rawExchange(h.url, post(hostLines));
      assertErrorRecord(response, Errors.BAD_REQUEST);
      assert.match(response.body, message, hostLines);
    }
    const tenTimes = await rawExchange(h.url, 'GET /healthz HTTP/1.0\r\nhost: a\r\nhost: b\r\n\r\n');
    assertErrorRecord(tenTimes, Errors.BAD_REQUEST);
    assert.equal(await h.store.plants.getPlant(90211n), undefined);
    for (const host of ['127.0.0.1:8080', '[::1]:8080', 'plants.example', 'xn--bcher-kva.example', '']) {
      const fine = await rawExchange(h.url, `GET /healthz HTTP/1.1\r\nhost: ${host}\r\nconnection: close\r\n\r\n`);
      assert.equal(fine.status, 200, `Host: ${host}: ${fine.body}`);
    }
  });

  it('two Content-Type headers get 400 BAD_REQUEST (Node would keep the first), nothing stored', async () => {
    const body = '{"id":90212,"name":"twotypes"}';
    for (const second of ['application/json', 'text/plain']) {
      const response = await rawExchange(
        h.url,
        `POST /plants HTTP/1.1\r\nhost: x\r\nconnection: close\r\nauthorization: Bearer ${h.tokens.write}\r\n` +
          `content-type: application/json\r\ncontent-type: ${second}\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
      );
      assertErrorRecord(response, Errors.BAD_REQUEST);
      assert.match(response.body, /exactly one Content-Type header/);
    }
    assert.equal(await h.store.plants.getPlant(90212n), undefined);
  });

  it('pipelined requests on one connection are handled one after another, each seeing the writes answered before it (RFC 9112 9.3.2)', async () => {
    const auth = `authorization: Bearer ${h.tokens.all}\r\n`;
    const body = '{"id":77001,"name":"pipelined"}';
    const create = `POST /plants HTTP/1.1\r\nhost: x\r\n${auth}content-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
    const remove = `DELETE /plants/77001 HTTP/1.1\r\nhost: x\r\n${auth}\r\n`;
    const read = `GET /plants/77001 HTTP/1.1\r\nhost: x\r\n${auth}connection: close\r\n\r\n`;
    for (let round = 0; round < 5; round++) {
      const connection = await RawConnection.open(h.url);
      try {
        await connection.write(create + remove + read);
        const created = await connection.response();
        assert.deepEqual(
          { status: created.status, body: created.body },
          { status: 200, body: '{"name":"pipelined"}' },
          `round ${round}`,
        );
        assert.equal(
          (await connection.response(10_000, true)).status,
          204,
          `round ${round}: the DELETE saw the plant the POST before it created`,
        );
        const afterwards = await connection.response();
        assert.equal(afterwards.status, 404, `round ${round}: the GET saw the DELETE before it (${afterwards.body})`);
      } finally {
        connection.destroy();
      }
      assert.equal(await h.store.plants.getPlant(77001n), undefined);
    }
  });

  it('two Authorization headers get 400 BAD_REQUEST whatever their order (Node would silently keep the first), nothing stored', async () => {
    const valid = `Bearer ${h.tokens.write}`;
    for (const [first, second] of [
      [valid, 'Bearer pst_other'],
      ['Bearer pst_other', valid],
      [valid, valid],
    ]) {
      const body = '{"id":77002,"name":"twice"}';
      const request =
        `POST /plants HTTP/1.1\r\nhost: x\r\nconnection: close\r\nAuthorization: ${first}\r\nauthorization: ${second}\r\n` +
        `content-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
      const response = await rawExchange(h.url, request);
      assertErrorRecord(response, Errors.BAD_REQUEST);
      assert.match(response.body, /exactly one Authorization header/);
    }
    assert.equal(await h.store.plants.getPlant(77002n), undefined);
  });

  it('URLs the router refuses (bad percent-encoding, a 101-character path parameter) get Error records', async () => {
    for (const path of ['/%', '/plants/%zz', '/plants/%E0%A4%A']) {
      assertErrorRecord(
        await rawExchange(h.url, head('GET', path, { authorization: `Bearer ${h.tokens.read}` })),
        Errors.BAD_REQUEST,
      );
    }
    const long = await rawExchange(
      h.url,
      head('GET', `/plants/${'1'.repeat(101)}`, { authorization: `Bearer ${h.tokens.read}` }),
    );
    assertErrorRecord(long, Errors.INVALID_PARAMETER);
  });

  it('slowloris: a head sent one byte at a time is cut off with 408 after HEADERS_TIMEOUT_MS, while others are served', async () => {
    const slow = await Promise.all(Array.from({ length: 50 }, () => RawConnection.open(h.url)));
    const text = 'GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: ';
    let sent = 0;
    const drip = setInterval(() => {
      for (const connection of slow) void connection.write(text[sent] ?? 'a');
      sent++;
    }, 200);
    try {
      const started = Date.now();
      // Meanwhile, normal clients are served promptly.
      for (let i = 0; i < 5; i++) {
        const t0 = Date.now();
        assert.equal((await fetch(`${h.url}/healthz`)).status, 200);
        assert.ok(Date.now() - t0 < 2000, 'a normal request waited behind the slow ones');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const responses = await Promise.all(slow.map((connection) => connection.response(HEADERS_TIMEOUT_MS + 8000)));
      for (const response of responses) assertErrorRecord(response, Errors.REQUEST_TIMEOUT);
      await Promise.all(slow.map((connection) => connection.closedWithin(2000)));
      const took = Date.now() - started;
      // Node checks timeouts once a second: cut off within the timeout plus that interval
      // (and slack for a busy machine; without the limit they would be held until they stop).
      assert.ok(took < HEADERS_TIMEOUT_MS + 5000, `slow clients were held ${took} ms`);
    } finally {
      clearInterval(drip);
      slow.forEach((connection) => connection.destroy());
    }
  });

  it('a body sent one byte at a time is cut off with 408 after REQUEST_TIMEOUT_MS', async () => {
    const connection = await RawConnection.open(h.url);
    const body = '{"id": 77, "name": "slowly sent"}';
    await connection.write(postHead({ 'content-length': String(body.length) }));
    let sent = 0;
    const drip = setInterval(() => void connection.write(body[sent++] ?? ' '), 200);
    try {
      const started = Date.now();
      assertErrorRecord(await connection.response(REQUEST_TIMEOUT_MS + 8000), Errors.REQUEST_TIMEOUT);
      assert.ok(Date.now() - started < REQUEST_TIMEOUT_MS + 5000);
    } finally {
      clearInterval(drip);
      connection.destroy();
    }
    // Nothing half-sent was stored.
    const read = await fetch(`${h.url}/plants/77`, { headers: { authorization: `Bearer ${h.tokens.read}` } });
    assert.equal(read.status, 404);
  });

  it('an idle keep-alive connection is not mistaken for a slow client', async () => {
    const connection = await RawConnection.open(h.url);
    try {
      await connection.write('GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
      assert.equal((await connection.response()).status, 200);
      await new Promise((resolve) => setTimeout(resolve, HEADERS_TIMEOUT_MS * 2.5));
      await connection.write('GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
      assert.equal((await connection.response()).status, 200);
    } finally {
      connection.destroy();
    }
  });
});
