/**
 * Receivers that answer bytes: a NUL, bytes that are not UTF-8, a gzip body. Each delivery ends by its status
 * with one attempt whose excerpt reads back through the delivery log (PostgreSQL's text refuses a NUL: such an
 * attempt was never recorded and its delivery was sent again every lease, forever). And an attempt the store
 * refuses to record still finishes its delivery, counted and logged. Real receivers, both stores.
 */
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it, type TestContext } from 'node:test';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, postPlant, type Harness } from '../support/harness.js';
import { execSql } from './database.js';
import { sleep, startReceiver, type Receiver, type Reply } from './receiver.js';
import { subscribeWebhook } from './subscribe.js';

interface Attempt {
  attempt: number;
  responseStatus?: number;
  responseBody?: string;
  responseContentType?: string;
}
interface Delivery {
  status: string;
  attemptCount: number;
  attempts: Attempt[];
}

const GZIPPED = gzipSync(JSON.stringify({ ok: true, note: 'x'.repeat(300) }));

/** What each plant's delivery is answered, by the plant's id, and the excerpt the log must show. */
const REPLIES: Record<string, { reply: Reply; status: string; excerpt: (text: string) => void }> = {
  '1': {
    reply: { status: 200, body: Buffer.from('ok\0\0done', 'latin1'), headers: { 'content-type': 'text/plain' } },
    status: 'succeeded',
    excerpt: (text) => assert.equal(text, 'ok\uFFFD\uFFFDdone'),
  },
  '2': {
    reply: { status: 500, body: Buffer.from([0x62, 0x61, 0x64, 0xff, 0xfe, 0x00, 0xc3]) },
    status: 'failed',
    excerpt: (text) => assert.equal(text, 'bad\uFFFD\uFFFD\uFFFD\uFFFD'),
  },
  '3': {
    reply: {
      status: 202,
      body: GZIPPED,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    },
    status: 'succeeded',
    excerpt: (text) => {
      // The raw bytes as text: a gzip header has NULs and bytes that are not UTF-8, all shown as U+FFFD.
      assert.ok(GZIPPED.includes(0));
      assert.ok(!text.includes('\0'));
      assert.equal(text, new TextDecoder().decode(GZIPPED).replaceAll('\u0000', '\uFFFD'));
    },
  },
};

function replyTo(body: string): Reply {
  const id = /^\{"id":(\d+),/.exec(body)?.[1] ?? '';
  return REPLIES[id]?.reply ?? { status: 200, body: Buffer.from('ok') };
}

async function settledLog(h: Harness, id: string, count: number): Promise<Delivery[]> {
  const read = async () =>
    (await h.request({ method: 'GET', url: `/webhooks/${id}/deliveries`, headers: bearer(h.tokens.admin) })).json<
      Delivery[]
    >();
  let log = await read();
  // Ten seconds: far less than a lease (WEBHOOK_TIMEOUT_MS + 15 s), so a delivery left pending shows as such.
  for (let i = 0; i < 400 && !(log.length === count && log.every((d) => d.status !== 'pending')); i += 1) {
    await sleep(25);
    log = await read();
  }
  return log;
}

async function scrape(h: Harness): Promise<string> {
  const response = await h.request({ method: 'GET', url: '/metrics', headers: bearer(h.tokens.admin) });
  assert.equal(response.statusCode, 200, response.body);
  return response.body;
}

for (const backend of testBackends())
  describe(`receivers answering bytes [${backend.name}]`, () => {
    let receiver: Receiver;
    before(async () => {
      receiver = await startReceiver((_index, request) => replyTo(request.body));
    });
    after(() => receiver.close());
    const harness = async (t: TestContext) => {
      const h = await createHarness({
        backend,
        env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_POLL_INTERVAL_MS: '50', WEBHOOK_RETRY_SCHEDULE: 'none' },
      });
      t.after(() => h.close());
      return h;
    };

    it('a NUL, bytes that are not UTF-8 and gzip: each delivery ends by its status, its excerpt in the log', async (t) => {
      const h = await harness(t);
      const { id } = await subscribeWebhook(h, { url: receiver.url });
      for (const plant of Object.keys(REPLIES))
        assert.equal((await postPlant(h, `{"id": ${plant}, "name": "Plant ${plant}"}`)).statusCode, 200);
      const log = await settledLog(h, id, 3);
      assert.deepEqual(
        log.map((d) => d.status),
        ['3', '2', '1'].map((plant) => REPLIES[plant]?.status),
      );
      for (const [index, plant] of ['3', '2', '1'].entries()) {
        const delivery = log[index];
        const expected = REPLIES[plant];
        assert.ok(delivery !== undefined && expected !== undefined);
        assert.equal(delivery.attemptCount, 1, `plant ${plant}`);
        assert.equal(delivery.attempts.length, 1, `plant ${plant}: its attempt is recorded`);
        assert.equal(delivery.attempts[0]?.responseStatus, expected.reply.status);
        expected.excerpt(delivery.attempts[0]?.responseBody ?? '<none>');
      }
      assert.equal(log[0]?.attempts[0]?.responseContentType, 'application/json');
      assert.doesNotMatch(h.logs(), /could not record a delivery attempt/);
    });

    it('an attempt the store refuses to record still finishes its delivery by its status, counted and logged', async (t) => {
      const h = await harness(t);
      const { id } = await subscribeWebhook(h, { url: receiver.url });
      await execSql(h.databaseUrl, {
        sqlite: `CREATE TRIGGER refuse_attempts BEFORE INSERT ON webhook_delivery_attempts
                 BEGIN SELECT RAISE(ABORT, 'attempt records refused by a test'); END;`,
        postgres: `CREATE FUNCTION refuse_attempts() RETURNS trigger LANGUAGE plpgsql
                     AS $$ BEGIN RAISE EXCEPTION 'attempt records refused by a test'; END $$;
                   CREATE TRIGGER refuse_attempts BEFORE INSERT ON webhook_delivery_attempts
                     FOR EACH ROW EXECUTE FUNCTION refuse_attempts();`,
      });
      assert.match(await scrape(h), /^plantstore_webhook_attempt_records_failed_total 0$/m);
      const sentBefore = receiver.received.length;
      // Plant 1 is acknowledged, plant 2 answered 500 (no retries here).
      for (const plant of ['1', '2'])
        assert.equal((await postPlant(h, `{"id": ${plant}, "name": "Plant ${plant}"}`)).statusCode, 200);
      const log = await settledLog(h, id, 2);
      assert.deepEqual(
        log.map((d) => [d.status, d.attemptCount, d.attempts.length]),
        [
          ['failed', 1, 0],
          ['succeeded', 1, 0],
        ],
      );
      assert.match(await scrape(h), /^plantstore_webhook_attempt_records_failed_total 2$/m);
      const warnings = h.logs().match(/could not record a delivery attempt; its delivery is finished/g) ?? [];
      assert.equal(warnings.length, 2);
      assert.equal(receiver.received.length - sentBefore, 2, 'each sent once');
    });
  });
