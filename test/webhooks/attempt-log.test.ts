/**
 * The delivery log's attempts keep the head of each response (its first 1 KiB and Content-Type) and never the
 * signing secret; each delivery names its plant; the log is filtered by event and by plant. Real receivers, both
 * stores.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { parseJson } from '../../packages/client/src/json.js';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, json, postPlant, type Harness } from '../support/harness.js';
import { sleep } from './receiver.js';

interface Attempt {
  responseStatus?: number;
  responseBody?: string;
  responseContentType?: string;
  error?: string;
}
interface Delivery {
  eventId: string;
  status: string;
  attempts: Attempt[];
}

const LONG = `${'é'.repeat(600)}${'x'.repeat(2000)}`;

for (const backend of testBackends())
  describe(`the attempt log [${backend.name}]`, () => {
    let h: Harness;
    let server: Server;
    let url: string;
    before(async () => {
      h = await createHarness({
        backend,
        env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_POLL_INTERVAL_MS: '50', WEBHOOK_RETRY_SCHEDULE: 'none' },
      });
      // Plant 1 is refused with a short JSON reason; plant 2 acknowledged with a long body.
      server = createServer((request, response) => {
        let body = '';
        request.on('data', (chunk: Buffer) => (body += chunk.toString()));
        request.on('end', () => {
          if (body.startsWith('{"id":1,'))
            response.writeHead(422, { 'content-type': 'application/json' }).end('{"reason":"unknown tag"}');
          else response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(LONG);
        });
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    });
    after(async () => {
      await h.close();
      server.closeAllConnections();
      server.close();
    });

    it('keeps the status, the first 1 KiB of the body and its content type; filters by event', async () => {
      const subscribed = await h.request({
        method: 'POST',
        url: '/webhooks',
        headers: { ...json, ...bearer(h.tokens.admin) },
        payload: JSON.stringify({ url }),
      });
      const { id, secret } = subscribed.json() as { id: string; secret: string };
      assert.equal((await postPlant(h, '{"id": 1, "name": "Refused"}')).statusCode, 200);
      assert.equal((await postPlant(h, '{"id": 2, "name": "Taken"}')).statusCode, 200);
      const read = async (query = '') =>
        (
          await h.request({ method: 'GET', url: `/webhooks/${id}/deliveries${query}`, headers: bearer(h.tokens.admin) })
        ).json() as Delivery[];
      let log = await read();
      for (let i = 0; i < 400 && !(log.length === 2 && log.every((d) => d.status !== 'pending')); i += 1) {
        await sleep(25);
        log = await read();
      }
      const [taken, refused] = log;
      assert.equal(refused?.status, 'failed');
      assert.deepEqual(refused.attempts[0] && { ...refused.attempts[0] }, {
        ...refused.attempts[0],
        responseStatus: 422,
        responseBody: '{"reason":"unknown tag"}',
        responseContentType: 'application/json',
        error: 'the subscriber answered 422',
      });
      assert.equal(taken?.status, 'succeeded');
      const body = taken.attempts[0]?.responseBody ?? '';
      assert.equal(Buffer.byteLength(body.replace(/\uFFFD$/, '')) <= 1024, true);
      assert.ok(LONG.startsWith(body.replace(/\uFFFD$/, '')), 'the head of the body, cut at 1 KiB');
      assert.ok(body.length >= 500);
      assert.equal(taken.attempts[0]?.responseContentType, 'text/plain; charset=utf-8');
      const all = JSON.stringify(log);
      assert.ok(!all.includes(secret.slice('whsec_'.length)), 'never the secret');

      const only = await read(`?eventId=${refused.eventId}`);
      assert.deepEqual(
        only.map((d) => d.eventId),
        [refused.eventId],
      );
      assert.deepEqual(await read(`?eventId=${refused.eventId}&status=succeeded`), []);
      const bad = await h.request({
        method: 'GET',
        url: `/webhooks/${id}/deliveries?eventId=nope`,
        headers: bearer(h.tokens.admin),
      });
      assert.equal(bad.statusCode, 400);
      assert.match(bad.body, /eventId/);
    });

    it('filters by plant: the events about that plant, its int64 id exact', async () => {
      const subscribed = await h.request({
        method: 'POST',
        url: '/webhooks',
        headers: { ...json, ...bearer(h.tokens.admin) },
        payload: JSON.stringify({ url, eventTypes: ['plant.created', 'plant.updated', 'plant.deleted'] }),
      });
      const { id } = subscribed.json() as { id: string };
      // Two ids a double cannot tell apart.
      const [max, beside] = ['9223372036854775807', '9223372036854775806'];
      assert.equal((await postPlant(h, `{"id": ${max}, "name": "Max"}`)).statusCode, 200);
      assert.equal((await postPlant(h, `{"id": ${beside}, "name": "Beside"}`)).statusCode, 200);
      const changed = await h.request({
        method: 'PATCH',
        url: `/plants/${max}`,
        headers: { 'content-type': 'application/merge-patch+json', ...bearer(h.tokens.write) },
        payload: '{"name": "Max, renamed"}',
      });
      assert.equal(changed.statusCode, 200, changed.body);
      assert.equal(
        (await h.request({ method: 'DELETE', url: `/plants/${beside}`, headers: bearer(h.tokens.write) })).statusCode,
        204,
      );
      const read = async (query: string) => {
        const response = await h.request({
          method: 'GET',
          url: `/webhooks/${id}/deliveries${query}`,
          headers: bearer(h.tokens.admin),
        });
        assert.equal(response.statusCode, 200, response.body);
        return response.json() as (Delivery & { eventType: string })[];
      };
      assert.equal((await read('')).length, 4);
      // Each delivery names its plant: the id every digit exact (read as the typed client reads it), and the name
      // the event carried (none in a deletion's event).
      const named = await h.request({
        method: 'GET',
        url: `/webhooks/${id}/deliveries`,
        headers: bearer(h.tokens.admin),
      });
      const log = parseJson(named.body) as { eventType: string; plantId?: bigint; plantName?: string }[];
      assert.deepEqual(
        log.map((d) => [d.eventType, d.plantId, d.plantName]),
        [
          ['plant.deleted', BigInt(beside), undefined],
          ['plant.updated', BigInt(max), 'Max, renamed'],
          ['plant.created', BigInt(beside), 'Beside'],
          ['plant.created', BigInt(max), 'Max'],
        ],
      );
      assert.match(named.body, new RegExp(`"plantId":${max},"plantName":"Max, renamed"`));
      assert.deepEqual(
        (await read(`?plantId=${max}`)).map((d) => d.eventType),
        ['plant.updated', 'plant.created'],
      );
      const ofBeside = await read(`?plantId=${beside}`);
      assert.deepEqual(
        ofBeside.map((d) => d.eventType),
        ['plant.deleted', 'plant.created'],
      );
      assert.deepEqual(
        (await read(`?plantId=${beside}&eventId=${ofBeside[0]?.eventId}`)).map((d) => d.eventType),
        ['plant.deleted'],
      );
      assert.deepEqual(await read(`?plantId=${max}&limit=1`).then((log) => log.length), 1);
      assert.deepEqual(await read('?plantId=-5'), []);
      for (const wrong of ['x', '9223372036854775808', '1.5']) {
        const bad = await h.request({
          method: 'GET',
          url: `/webhooks/${id}/deliveries?plantId=${wrong}`,
          headers: bearer(h.tokens.admin),
        });
        assert.equal(bad.statusCode, 400, wrong);
        assert.match(bad.body, /plantId/);
      }
    });
  });
