/**
 * The checks around tests that build the app themselves (checked-app.ts) and around requests to service processes
 * (checked-fetch.ts): a response off the document fails the test that received it.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import swagger from '@fastify/swagger';
import Fastify, { type FastifyInstance } from 'fastify';
import { checkResponses } from '../support/checked-app.js';
import { checkedFetch } from '../support/checked-fetch.js';

/** An app documenting one JSON answer {"a": string} that answers {} on /wrong. */
async function lyingApp(): Promise<FastifyInstance> {
  const app = Fastify();
  await app.register(swagger, { openapi: { openapi: '3.1.0', info: { title: 't', version: '1' } } });
  const schema = {
    response: { 200: { type: 'object', required: ['a'], properties: { a: { type: 'string' } } } },
  };
  for (const [path, body] of [
    ['/right', '{"a":"x"}'],
    ['/wrong', '{}'],
  ] as const) {
    app.get(path, { schema }, async (_request, reply) =>
      reply.header('content-type', 'application/json').header('cache-control', 'no-store').send(body),
    );
  }
  await app.ready();
  return checkResponses(app);
}

describe('the checked app', () => {
  it('fails an injected response off the document when it arrives', async () => {
    const app = await lyingApp();
    try {
      assert.equal((await app.inject({ method: 'GET', url: '/right' })).statusCode, 200);
      await assert.rejects(app.inject({ method: 'GET', url: '/wrong' }), /GET \/wrong -> 200: the body does not match/);
    } finally {
      await app.close();
    }
  });

  it("fails a socket's response off the document when the app closes", async () => {
    const app = await lyingApp();
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    assert.equal((await fetch(`${url}/wrong`)).status, 200);
    await assert.rejects(app.close(), /GET \/wrong -> 200: the body does not match/);
  });
});

describe('the checked fetch', () => {
  let server: Server;
  let url: string;
  before(async () => {
    // Stands in for a service process: one plant as documented, one without its name.
    server = createServer((request, response) => {
      const body = request.url === '/plants/1' ? '{"id":1,"name":"a"}' : '{"id":2}';
      response.writeHead(200, { 'content-type': 'application/json', etag: '"1"', 'cache-control': 'no-store' });
      response.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('passes a documented response and leaves its body to the caller', async () => {
    const response = await checkedFetch(`${url}/plants/1`);
    assert.equal(await response.text(), '{"id":1,"name":"a"}');
  });

  it('fails a response off the document', async () => {
    await assert.rejects(checkedFetch(`${url}/plants/2`), /GET \/plants\/2 -> 200: the body does not match/);
  });
});
