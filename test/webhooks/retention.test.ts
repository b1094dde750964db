/**
 * The retention job (src/webhooks/retention.ts) on every backend: its schedule,
 * chunks, logs, failures and shutdown, with an injected clock and interval; its
 * wiring into the app (WEBHOOK_RETENTION_DAYS); and what clients see afterwards.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { StoreUnavailableError } from '../../src/store/errors.js';
import type { WebhookStore } from '../../src/store/types.js';
import { WebhookRetentionJob, type RetentionOptions } from '../../src/webhooks/retention.js';
import { testBackends, type OpenedTestStore } from '../support/backends.js';
import { bearer, createHarness, json, postPlant } from '../support/harness.js';
import { addSubscription, backdateEvent, outboxRows, seedEvent, type Fate } from './outbox.js';
import { startReceiver } from './receiver.js';

const DAY_MS = 86_400_000;
const NOW = new Date('2030-06-01T00:00:00Z');
const daysBeforeNow = (days: number) => new Date(NOW.getTime() - days * DAY_MS);

interface PruneCall {
  readonly before: Date;
  readonly limit: number;
  readonly outcome: number | Error;
}

/** The store's pruneFinishedEvents, recorded; `intercept` may fail or hold a call. */
function recordingStore(store: WebhookStore, intercept: (index: number) => Promise<void> = async () => {}) {
  const calls: PruneCall[] = [];
  let started = 0;
  return {
    calls,
    started: () => started,
    async pruneFinishedEvents(before: Date, limit: number): Promise<number> {
      try {
        await intercept(started++);
        const pruned = await store.pruneFinishedEvents(before, limit);
        calls.push({ before, limit, outcome: pruned });
        return pruned;
      } catch (error) {
        calls.push({ before, limit, outcome: error as Error });
        throw error;
      }
    },
  };
}

function recordingLog() {
  const entries: { level: 'info' | 'warn'; object: Record<string, unknown>; message: string }[] = [];
  return {
    entries,
    info: (object: object, message: string) =>
      void entries.push({ level: 'info', object: object as Record<string, unknown>, message }),
    warn: (object: object, message: string) =>
      void entries.push({ level: 'warn', object: object as Record<string, unknown>, message }),
  };
}

/** Resolves once `condition` holds (checked every few ms), or fails after `timeoutMs`. */
async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

for (const backend of testBackends())
  describe(`the webhook retention job [${backend.name}]`, () => {
    let opened: OpenedTestStore;
    let subscription: string;
    let plantId = 0;
    before(async () => {
      opened = await backend.open();
    });
    after(() => opened.cleanup());
    // Each test starts from an empty outbox and a fresh subscription.
    beforeEach(async () => {
      for (const { id } of await opened.store.webhooks.listSubscriptions())
        await opened.store.webhooks.deleteSubscription(id);
      await opened.store.webhooks.pruneFinishedEvents(new Date('2100-01-01T00:00:00Z'), 100_000);
      assert.deepEqual((await outboxRows(opened.databaseUrl)).events, []);
      subscription = await addSubscription(opened.store);
    });

    const seed = async (fate: Fate, createdAt: Date) => {
      const event = await seedEvent(opened.store, (plantId += 1), { [subscription]: fate });
      await backdateEvent(opened.databaseUrl, event.eventId, createdAt);
      return event.eventId;
    };
    const job = (
      store: Pick<WebhookStore, 'pruneFinishedEvents'>,
      log: ReturnType<typeof recordingLog>,
      options: Partial<RetentionOptions> = {},
    ) =>
      new WebhookRetentionJob(store, {
        retentionDays: 30,
        log,
        now: () => NOW,
        firstRunDelayMs: 0,
        intervalMs: 20,
        ...options,
      });

    it('runs at start and then on its interval, deletes in chunks until one comes back short, and logs the count once', async () => {
      for (let i = 0; i < 5; i += 1) await seed(i % 2 === 0 ? 'succeeded' : 'failed', daysBeforeNow(60 - i));
      const recent = await seed('succeeded', daysBeforeNow(29));
      const pending = await seed('pending', daysBeforeNow(365));
      const store = recordingStore(opened.store.webhooks);
      const log = recordingLog();
      const retention = job(store, log, { chunkSize: 2 });
      retention.start();
      try {
        // The first run: 2, 2, then 1 (short, so it stops); then two more runs on the interval.
        await until(() => store.calls.length >= 5, 'three runs');
      } finally {
        await retention.stop();
      }
      assert.deepEqual(
        store.calls.slice(0, 5).map((c) => c.outcome),
        [2, 2, 1, 0, 0],
      );
      for (const call of store.calls) {
        assert.equal(call.limit, 2);
        assert.equal(
          call.before.toISOString(),
          daysBeforeNow(30).toISOString(),
          'the cutoff is 30 days before the injected clock',
        );
      }
      assert.deepEqual(
        log.entries.map((e) => [e.level, e.object.pruned]),
        [['info', 5]],
        'one line, for the run that deleted something',
      );
      assert.match(log.entries[0]?.message ?? '', /deleted 5 finished events older than 30 days/);
      assert.deepEqual((await outboxRows(opened.databaseUrl)).events, [recent, pending].sort());
    });

    it('logs a warning when the store fails, keeps running, and the next run deletes what is due', async () => {
      const event = await seed('failed', daysBeforeNow(45));
      const store = recordingStore(opened.store.webhooks, async (index) => {
        if (index === 0) throw new StoreUnavailableError('SQLite store unavailable (SQLITE_BUSY)');
      });
      const log = recordingLog();
      const retention = job(store, log);
      retention.start();
      try {
        await until(() => store.calls.some((c) => c.outcome === 1), 'a run after the failure');
      } finally {
        await retention.stop();
      }
      assert.ok(store.calls[0]?.outcome instanceof StoreUnavailableError);
      assert.deepEqual(
        log.entries.map((e) => e.level),
        ['warn', 'info'],
      );
      assert.match(log.entries[0]?.message ?? '', /could not delete old events/);
      assert.ok(log.entries[0]?.object.err instanceof StoreUnavailableError);
      assert.ok(!(await outboxRows(opened.databaseUrl)).events.includes(event));
    });

    it('with 0 days never runs: old events are kept forever', async () => {
      const event = await seed('succeeded', daysBeforeNow(10_000));
      const store = recordingStore(opened.store.webhooks);
      const retention = job(store, recordingLog(), { retentionDays: 0, intervalMs: 1 });
      retention.start();
      assert.equal(retention.active, false, 'nothing is scheduled');
      await sleep(50); // fifty would-be intervals
      await retention.stop();
      assert.equal(store.started(), 0);
      assert.deepEqual((await outboxRows(opened.databaseUrl)).events, [event]);
    });

    it('stop() waits for the chunk in flight, then deletes no more', async () => {
      for (let i = 0; i < 3; i += 1) await seed('succeeded', daysBeforeNow(40));
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const store = recordingStore(opened.store.webhooks, (index) => (index === 0 ? held : Promise.resolve()));
      const retention = job(store, recordingLog(), { chunkSize: 1, intervalMs: 1 });
      retention.start();
      await until(() => store.started() === 1, 'the first chunk');
      let stopped = false;
      const stopping = retention.stop().then(() => (stopped = true));
      await sleep(20);
      assert.equal(stopped, false, 'stop() waits while the chunk is in flight');
      release();
      await stopping;
      assert.equal(retention.active, false);
      await sleep(20); // twenty would-be intervals
      assert.deepEqual(
        store.calls.map((c) => c.outcome),
        [1],
        'a full chunk, but no next one after stop()',
      );
      assert.equal((await outboxRows(opened.databaseUrl)).events.length, 2, 'the rest waits for the next start');
    });

    it('runs in the app (WEBHOOK_RETENTION_DAYS), from ready to close; a pruned delivery is gone from the API (404)', async () => {
      const h = await createHarness({
        backend,
        env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_POLL_INTERVAL_MS: '50', WEBHOOK_RETENTION_DAYS: '7' },
      });
      const receiver = await startReceiver();
      try {
        const retention = h.app.webhookRetention;
        assert.ok(retention?.active, 'scheduled once the app is ready');
        const created = await h.request({
          method: 'POST',
          url: '/webhooks',
          headers: { ...json, ...bearer(h.tokens.admin) },
          payload: JSON.stringify({ url: receiver.url }),
        });
        assert.equal(created.statusCode, 201, created.body);
        const { id } = created.json() as { id: string };
        assert.equal((await postPlant(h, '{"id": 1, "name": "soon forgotten"}')).statusCode, 200);
        const list = async () =>
          (
            await h.request({ method: 'GET', url: `/webhooks/${id}/deliveries`, headers: bearer(h.tokens.admin) })
          ).json() as { id: string; eventId: string; status: string }[];
        await until(async () => (await list())[0]?.status === 'succeeded', 'the delivery to succeed');
        const [delivery] = await list();
        assert.ok(delivery);

        assert.equal(await retention.pruneNow(), 0, 'a new event is within 7 days');
        await backdateEvent(h.databaseUrl, delivery.eventId, new Date(Date.now() - 8 * DAY_MS));
        assert.equal(await retention.pruneNow(), 1);
        assert.match(h.logs(), /"pruned":1.*deleted 1 finished events older than 7 days/);

        assert.deepEqual(await list(), []);
        const retry = await h.request({
          method: 'POST',
          url: `/webhooks/${id}/deliveries/${delivery.id}/retry`,
          headers: bearer(h.tokens.admin),
        });
        assert.equal(retry.statusCode, 404, retry.body);
        assert.equal((retry.json() as { error: number }).error, 40404);
      } finally {
        await h.close();
        await receiver.close();
      }
      assert.equal(h.app.webhookRetention?.active, false, 'stopped when the app closed');

      const keepForever = await createHarness({ backend, env: { WEBHOOK_RETENTION_DAYS: '0' } });
      try {
        assert.equal(keepForever.app.webhookRetention?.active, false);
      } finally {
        await keepForever.close();
      }
    });
  });

describe('WEBHOOK_RETENTION_DAYS', () => {
  it('defaults to 30; 0 keeps events forever; anything but an integer from 0 to 36500 stops start-up, naming it', () => {
    assert.equal(loadConfig({}).webhookRetentionDays, 30);
    assert.equal(loadConfig({ WEBHOOK_RETENTION_DAYS: '0' }).webhookRetentionDays, 0);
    assert.equal(loadConfig({ WEBHOOK_RETENTION_DAYS: '36500' }).webhookRetentionDays, 36_500);
    for (const bad of ['-1', '36501', '1.5', '30d', 'forever']) {
      assert.throws(
        () => loadConfig({ WEBHOOK_RETENTION_DAYS: bad }),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.message === `WEBHOOK_RETENTION_DAYS must be an integer from 0 to 36500 (got '${bad}')`,
        bad,
      );
    }
  });
});
