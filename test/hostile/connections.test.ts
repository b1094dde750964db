/**
 * One connection, several requests: what a client sees when its requests come
 * without a body it did not mean to send, after one another without waiting, or
 * ahead of bytes that are not HTTP. Over real sockets, on each store, since each
 * case is about whether a change was applied and answered.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { testBackends } from '../support/backends.js';
import { bearer, json, postPlant } from '../support/harness.js';
import { assertErrorRecord, listeningHarness, type ListeningHarness } from './listening.js';
import { RawConnection, rawExchange } from './raw-http.js';

for (const backend of testBackends())
  describe(`requests on one connection [${backend.name}]`, () => {
    let h: ListeningHarness;
    before(async () => {
      h = await listeningHarness({ backend });
    });
    after(() => h.close());

    const auth = () => `authorization: Bearer ${h.tokens.all}\r\n`;
    const stored = async (id: bigint) => (await h.store.plants.getPlant(id)) !== undefined;

    it('an operation without a body ignores the Content-Type of an absent body (many clients send one on every request)', async () => {
      for (const [id, type, framing] of [
        [8001n, 'application/json', ''],
        [8002n, 'text/plain', ''],
        [8003n, 'application/json', 'content-length: 0\r\n'],
        [8004n, 'application/x-www-form-urlencoded', 'content-length: 0\r\n'],
      ] as const) {
        assert.equal((await postPlant(h, `{"id": ${id}, "name": "doomed"}`)).statusCode, 200);
        const response = await rawExchange(
          h.url,
          `DELETE /plants/${id} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n${auth()}content-type: ${type}\r\n${framing}\r\n`,
        );
        assert.equal(response.status, 204, `DELETE with Content-Type: ${type} ${framing.trim()}: ${response.body}`);
        assert.equal(await stored(id), false);
      }

      const created = await h.request({
        method: 'POST',
        url: '/webhooks',
        headers: { ...json, ...bearer(h.tokens.admin) },
        payload: '{"url": "https://93.184.216.34/hook"}',
      });
      const webhookId = (created.json() as { id: string }).id;
      const rotated = await rawExchange(
        h.url,
        `POST /webhooks/${webhookId}/rotate-secret HTTP/1.1\r\nhost: x\r\nconnection: close\r\n${auth()}content-type: application/json\r\n\r\n`,
      );
      assert.equal(rotated.status, 200, `rotate-secret without its optional body: ${rotated.body}`);
      const retried = await rawExchange(
        h.url,
        `POST /webhooks/${webhookId}/deliveries/dlv_none/retry HTTP/1.1\r\nhost: x\r\nconnection: close\r\n${auth()}content-type: text/plain\r\n\r\n`,
      );
      assertErrorRecord(retried, Errors.WEBHOOK_DELIVERY_NOT_FOUND);
      const unsubscribed = await rawExchange(
        h.url,
        `DELETE /webhooks/${webhookId} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n${auth()}content-type: application/json\r\n\r\n`,
      );
      assert.equal(unsubscribed.status, 204, unsubscribed.body);

      // An operation that needs its body still says so.
      const bodiless = await rawExchange(
        h.url,
        `POST /plants HTTP/1.1\r\nhost: x\r\nconnection: close\r\n${auth()}content-type: application/json\r\n\r\n`,
      );
      assertErrorRecord(bodiless, Errors.BODY_REQUIRED);
    });

    it('requests parsed before a malformed one are all answered, in order, then its 400, then the connection closes', async () => {
      for (let round = 0; round < 5; round++) {
        const id = 8100 + round;
        const body = `{"id":${id},"name":"before garbage"}`;
        const create = `POST /plants HTTP/1.1\r\nhost: x\r\n${auth()}content-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
        const read = `GET /plants/${id} HTTP/1.1\r\nhost: x\r\n${auth()}\r\n`;
        const connection = await RawConnection.open(h.url);
        try {
          await connection.write(create + read + read + 'GARBAGE \x00\r\n\r\n');
          const created = await connection.response();
          assert.deepEqual(
            { status: created.status, body: created.body },
            { status: 200, body: '{"name":"before garbage"}' },
            `round ${round}`,
          );
          for (let i = 0; i < 2; i++) {
            const got = await connection.response();
            assert.deepEqual(
              { status: got.status, body: got.body },
              { status: 200, body: `{"id":${id},"name":"before garbage"}` },
              `round ${round}, read ${i}`,
            );
          }
          const refused = await connection.response();
          assertErrorRecord(refused, Errors.BAD_REQUEST);
          await connection.closedWithin(2000);
        } finally {
          connection.destroy();
        }
        assert.equal(await stored(BigInt(id)), true);
      }
    });

    it("a DELETE sent with an unframed body (Node's http.request does that) is answered 204, never 400, and applied", async () => {
      for (let round = 0; round < 5; round++) {
        const id = 8200n + BigInt(round);
        assert.equal((await postPlant(h, `{"id": ${id}, "name": "doomed"}`)).statusCode, 200);
        const { hostname, port } = new URL(h.url);
        const status = await new Promise<number>((resolve, reject) => {
          const request = httpRequest(
            {
              host: hostname,
              port,
              method: 'DELETE',
              path: `/plants/${id}`,
              headers: { authorization: `Bearer ${h.tokens.all}`, 'content-type': 'application/json' },
            },
            (response) => {
              response.resume();
              resolve(response.statusCode ?? 0);
            },
          );
          request.on('error', reject);
          request.end('{}');
        });
        assert.equal(status, 204, `round ${round}`);
        assert.equal(await stored(id), false, `round ${round}`);
      }
    });
  });
