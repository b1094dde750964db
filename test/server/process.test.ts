import assert from 'node:assert/strict';
import { connect, Socket } from 'node:net';
import { describe, it } from 'node:test';
import { issueToken } from '../../src/tokens/token-service.js';
import { testBackends } from '../support/backends.js';
import { startServiceProcess } from '../support/service-process.js';
import { checkedFetch } from '../support/checked-fetch.js';

async function createPlant(url: string, token: string, id: string, name: string): Promise<number> {
  const response = await checkedFetch(`${url}/plants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: `{"id": ${id}, "name": ${JSON.stringify(name)}}`,
  });
  await response.arrayBuffer();
  return response.status;
}

async function readPlant(url: string, token: string, id: string): Promise<string> {
  const response = await checkedFetch(`${url}/plants/${id}`, { headers: { authorization: `Bearer ${token}` } });
  return `${response.status} ${await response.text()}`;
}

for (const backend of testBackends())
  describe(`the service process [${backend.name}]`, () => {
    it('on first start prints one all-scope token and a curl example that work; later starts do not', async () => {
      const opened = await backend.open();
      try {
        const first = await startServiceProcess({ DATABASE_URL: opened.databaseUrl });
        // The banner is printed just after the "listening" line the start resolves on.
        for (let i = 0; i < 100 && !first.output().includes('Manage tokens with'); i += 1)
          await new Promise((resolve) => setTimeout(resolve, 20));
        const banner = first.output();
        const token = /^ {4}(pst_[A-Za-z0-9_-]{43})$/m.exec(banner)?.[1];
        assert.ok(token, `no token in:\n${banner}`);
        assert.match(banner, /curl -i -X POST http:\/\/127\.0\.0\.1:\d+\/plants/);
        assert.equal(await createPlant(first.url, token, '1', 'from the banner'), 200);
        assert.equal(await readPlant(first.url, token, '1'), '200 {"id":1,"name":"from the banner"}');
        assert.equal(await first.stop(), 0);

        const second = await startServiceProcess({ DATABASE_URL: opened.databaseUrl });
        assert.ok(!/pst_/.test(second.output()), 'no second token on a store that has tokens');
        assert.equal(await second.stop(), 0);
      } finally {
        await opened.cleanup();
      }
    });

    it('keeps every acknowledged create across kill -9 and restart', async () => {
      const opened = await backend.open();
      const { secret } = await issueToken(opened.store.tokens, {
        name: 'writer',
        scopes: ['plants:read', 'plants:write'],
      });
      try {
        const service = await startServiceProcess({ DATABASE_URL: opened.databaseUrl });
        const ids = ['9223372036854775807', '-9223372036854775808', '9007199254740993', '42'];
        for (const id of ids) assert.equal(await createPlant(service.url, secret, id, `plant ${id}`), 200);
        assert.equal(await service.stop('SIGKILL'), 'SIGKILL');

        const restarted = await startServiceProcess({ DATABASE_URL: opened.databaseUrl });
        for (const id of ids)
          assert.equal(await readPlant(restarted.url, secret, id), `200 {"id":${id},"name":"plant ${id}"}`);
        assert.equal(await restarted.stop(), 0);
      } finally {
        await opened.cleanup();
      }
    });

    it('on SIGTERM finishes in-flight creates, exits 0, and every 200 is stored', async () => {
      const opened = await backend.open();
      const { secret } = await issueToken(opened.store.tokens, {
        name: 'writer',
        scopes: ['plants:read', 'plants:write'],
      });
      try {
        const service = await startServiceProcess({ DATABASE_URL: opened.databaseUrl });
        const attempts = Array.from({ length: 40 }, (_, i) =>
          createPlant(service.url, secret, String(1000 + i), `p${i}`).then(
            (status) => ({ i, status }),
            () => ({ i, status: 0 }),
          ),
        );
        await new Promise((resolve) => setTimeout(resolve, 5));
        const exitCode = service.stop('SIGTERM');
        const results = await Promise.all(attempts);
        assert.equal(await exitCode, 0);
        // Refused connections (0) are fine once the server stopped accepting; a 5xx is not.
        assert.ok(
          results.every((r) => r.status === 200 || r.status === 0 || r.status === 503),
          JSON.stringify(results),
        );
        const restarted = await startServiceProcess({ DATABASE_URL: opened.databaseUrl });
        for (const { i } of results.filter((r) => r.status === 200)) {
          assert.equal(
            await readPlant(restarted.url, secret, String(1000 + i)),
            `200 {"id":${1000 + i},"name":"p${i}"}`,
          );
        }
        await restarted.stop();
      } finally {
        await opened.cleanup();
      }
    });

    it('logs one JSON line per request with its id, and never a token or Authorization header', async () => {
      const opened = await backend.open();
      const { secret } = await issueToken(opened.store.tokens, {
        name: 'writer',
        scopes: ['plants:read', 'plants:write'],
      });
      try {
        const service = await startServiceProcess({ DATABASE_URL: opened.databaseUrl });
        await createPlant(service.url, secret, '5', 'logged');
        await checkedFetch(`${service.url}/plants/5`, {
          headers: { authorization: `Bearer ${secret}`, 'x-request-id': 'req-abc' },
        }).then((r) => r.text());
        await checkedFetch(`${service.url}/plants`, {
          method: 'POST',
          headers: { authorization: 'Bearer pst_wrong' },
        }).then((r) => r.text());
        await service.stop();
        const output = service.output();
        const requestLines = output
          .split('\n')
          .filter((line) => line.includes('"msg":"request"'))
          .map((line) => JSON.parse(line));
        assert.equal(requestLines.length, 3);
        assert.ok(requestLines.some((line) => line.reqId === 'req-abc' && line.status === 200));
        assert.ok(!output.includes(secret), 'token in logs');
        assert.ok(!output.includes('pst_wrong'), 'rejected token in logs');
        assert.ok(!/authorization/i.test(output), 'Authorization header in logs');
      } finally {
        await opened.cleanup();
      }
    });

    it('flushes every buffered log line when stopped by SIGTERM right after a burst (stdout is written asynchronously)', async () => {
      const opened = await backend.open();
      const { secret } = await issueToken(opened.store.tokens, { name: 'reader', scopes: ['plants:read'] });
      try {
        const service = await startServiceProcess({ DATABASE_URL: opened.databaseUrl });
        const burst = 300;
        await Promise.all(
          Array.from({ length: burst }, (_, i) =>
            checkedFetch(`${service.url}/plants/${i}`, {
              headers: { authorization: `Bearer ${secret}`, 'x-request-id': `burst-${i}` },
            }).then((r) => r.text()),
          ),
        );
        assert.equal(await service.stop(), 0);
        const lines = service
          .output()
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as { msg: string; reqId?: string });
        const logged = new Set(lines.filter((line) => line.msg === 'request').map((line) => line.reqId));
        assert.equal(
          Array.from({ length: burst }, (_, i) => `burst-${i}`).filter((id) => !logged.has(id)).length,
          0,
          'request lines missing',
        );
        assert.equal(lines.at(-1)?.msg, 'stopped', 'the last line is the shutdown message');
      } finally {
        await opened.cleanup();
      }
    });

    it("exits 0 on SIGTERM while connections that never finished a request head are open, a first one or a keep-alive one's next (they used to hold it to SHUTDOWN_TIMEOUT_MS, exit 1)", async () => {
      const opened = await backend.open();
      const sockets: Socket[] = [];
      try {
        const service = await startServiceProcess({ DATABASE_URL: opened.databaseUrl });
        const { hostname, port } = new URL(service.url);
        const open = async (firstBytes: string) => {
          const socket = connect(Number(port), hostname);
          sockets.push(socket);
          socket.on('error', () => {});
          await new Promise((resolve) => socket.once('connect', resolve));
          socket.write(firstBytes);
          return { closed: new Promise<void>((resolve) => socket.once('close', () => resolve())) };
        };
        // One opened ahead of need, as browsers and load balancers do; one a slow client's, half a head sent.
        const closed = [await open(''), await open('GET /healthz HTTP/1.1\r\nHo')];
        // A keep-alive connection answered once, then half-way through its second head.
        const kept = await open(`GET /healthz HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`);
        const keptSocket = sockets.at(-1) as Socket;
        await new Promise((resolve) => keptSocket.once('data', resolve));
        keptSocket.write('GET /healthz HTTP/1.1\r\nHo');
        closed.push(kept);
        await new Promise((resolve) => setTimeout(resolve, 200));
        assert.equal(await service.stop(), 0, service.output());
        assert.doesNotMatch(service.output(), /shutdown timed out/);
        await Promise.all(closed.map((socket) => socket.closed));
      } finally {
        for (const socket of sockets) socket.destroy();
        await opened.cleanup();
      }
    });

    it('on SIGTERM answers a request whose head came before it, though its body comes after, and stores it', async () => {
      const opened = await backend.open();
      const { secret } = await issueToken(opened.store.tokens, {
        name: 'writer',
        scopes: ['plants:read', 'plants:write'],
      });
      const socket = new Socket();
      try {
        const service = await startServiceProcess({ DATABASE_URL: opened.databaseUrl });
        const { hostname, port } = new URL(service.url);
        let answer = '';
        socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
        socket.on('error', () => {});
        const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
        await new Promise((resolve) => socket.connect(Number(port), hostname, () => resolve(undefined)));
        const body = '{"id": 77, "name": "late body"}';
        socket.write(
          `POST /plants HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${secret}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
        );
        await new Promise((resolve) => setTimeout(resolve, 200));
        const exitCode = service.stop('SIGTERM');
        // Several of the draining's sweeps pass while the request is still in progress.
        await new Promise((resolve) => setTimeout(resolve, 400));
        socket.write(body.slice(10));
        await closed;
        assert.match(answer, /^HTTP\/1\.1 200 /, answer);
        assert.equal(await exitCode, 0, service.output());
        const restarted = await startServiceProcess({ DATABASE_URL: opened.databaseUrl });
        assert.equal(await readPlant(restarted.url, secret, '77'), '200 {"id":77,"name":"late body"}');
        await restarted.stop();
      } finally {
        socket.destroy();
        await opened.cleanup();
      }
    });

    it('stops gracefully (exit 0) on a SIGTERM sent the moment it says it is listening', async () => {
      const opened = await backend.open();
      try {
        // The signal lands before startServer has returned; it used to kill the process outright.
        for (let i = 0; i < 4; i += 1) {
          const service = await startServiceProcess({ DATABASE_URL: opened.databaseUrl });
          assert.equal(await service.stop(), 0, service.output());
        }
      } finally {
        await opened.cleanup();
      }
    });
  });
