/**
 * Puts events in a test store's outbox in a chosen state, through the store's own
 * methods (a create, then a claim and an attempt as a dispatcher would record
 * them), and back-dates them, so retention tests need no receiver and no waiting.
 */
import type pg from 'pg';
import type { AttemptOutcome, Store } from '../../src/store/types.js';
import { execSql, selectColumn } from './database.js';

/** How a delivery ends up: finished either way, or still pending (a retry a day away, after one failed attempt). */
export type Fate = 'succeeded' | 'failed' | 'pending';

export interface SeededEvent {
  readonly eventId: string;
  /** Delivery id by subscription id. */
  readonly deliveries: ReadonlyMap<string, string>;
}

let subscriptionCount = 0;

/** A plant.created subscription written through the store (`maxPerSecond` throttles it); answers its id. */
export async function addSubscription(store: Store, maxPerSecond?: number): Promise<string> {
  const id = `whk_outbox_${(subscriptionCount += 1)}`;
  await store.webhooks.insertSubscription({
    id,
    url: 'https://example.com/hooks',
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    eventTypes: ['plant.created'],
    createdAt: new Date(),
    ...(maxPerSecond === undefined ? {} : { maxPerSecond }),
  });
  return id;
}

function outcomeOf(fate: Fate): AttemptOutcome {
  if (fate === 'succeeded') return { kind: 'succeeded' };
  if (fate === 'failed') return { kind: 'failed' };
  return { kind: 'retry', nextAttemptAt: new Date(Date.now() + 86_400_000) };
}

/**
 * Creates plant `plantId` (so an event with one delivery per subscription) and gives
 * each delivery one attempt, ending as `fates` says for its subscription. Every
 * delivery seeded before must be settled (none due), as this claims whatever is due.
 */
export async function seedEvent(
  store: Store,
  plantId: number,
  fates: Readonly<Record<string, Fate>>,
): Promise<SeededEvent> {
  const created = await store.plants.createPlant({ id: BigInt(plantId), name: `plant ${plantId}` });
  if (created.kind !== 'created') throw new Error(`plant ${plantId} already existed`);
  const claimed = await store.webhooks.claimDueDeliveries({
    now: new Date(),
    limit: 1000,
    leaseMs: 60_000,
    owner: 'seed',
  });
  const deliveries = new Map<string, string>();
  let eventId: string | undefined;
  for (const delivery of claimed) {
    const fate = fates[delivery.subscriptionId];
    if (fate === undefined) throw new Error(`no fate given for ${delivery.subscriptionId}`);
    eventId = delivery.eventId;
    deliveries.set(delivery.subscriptionId, delivery.deliveryId);
    await store.webhooks.recordAttempt({
      deliveryId: delivery.deliveryId,
      leaseOwner: delivery.leaseOwner,
      attempt: {
        attempt: delivery.attempt,
        attemptedAt: new Date(),
        latencyMs: 3,
        responseStatus: fate === 'succeeded' ? 200 : 500,
        ...(fate === 'succeeded' ? {} : { error: 'the subscriber answered 500' }),
      },
      outcome: outcomeOf(fate),
    });
  }
  if (eventId === undefined || deliveries.size !== Object.keys(fates).length) {
    throw new Error(
      `plant ${plantId}: expected ${Object.keys(fates).length} due deliveries, claimed ${claimed.length}`,
    );
  }
  return { eventId, deliveries };
}

/** Sets when an event was created (the ids are ours: msg_ and base64url, safe to inline). */
export async function backdateEvent(databaseUrl: string, eventId: string, createdAt: Date): Promise<void> {
  await execSql(databaseUrl, {
    sqlite: `UPDATE webhook_events SET created_at = ${createdAt.getTime()} WHERE id = '${eventId}'`,
    postgres: `UPDATE webhook_events SET created_at = '${createdAt.toISOString()}' WHERE id = '${eventId}'`,
  });
}

/** The outbox's rows, as sorted ids (attempts by the delivery they belong to). */
export async function outboxRows(
  databaseUrl: string,
): Promise<{ events: string[]; deliveries: string[]; attempts: string[] }> {
  const ids = async (sql: string) => (await selectColumn(databaseUrl, sql)).map(String).sort();
  return {
    events: await ids('SELECT id FROM webhook_events'),
    deliveries: await ids('SELECT id FROM webhook_deliveries'),
    attempts: await ids('SELECT delivery_id FROM webhook_delivery_attempts'),
  };
}

/**
 * Fills a PostgreSQL test schema's outbox in bulk, for plan tests: subscriptions whk_a and whk_b, then `events`
 * plant.created events (msg_1..., about plant 1...) a minute apart from 2020-01-01, each delivered to both (1% of the
 * deliveries pending, the rest succeeded).
 */
export async function fillPostgresOutbox(client: pg.Client, events: number): Promise<void> {
  await client.query(
    `INSERT INTO webhook_subscriptions (id, url, secret, created_at)
     VALUES ('whk_a', 'https://a.example', 'whsec_x', now()), ('whk_b', 'https://b.example', 'whsec_x', now())`,
  );
  await client.query(
    `INSERT INTO webhook_events (id, type, payload, created_at)
     SELECT 'msg_' || x, 'plant.created', '{"id":' || x || ',"name":"p"}', timestamptz '2020-01-01' + x * interval '1 minute'
     FROM generate_series(1, $1::int) AS x`,
    [events],
  );
  await client.query(
    `INSERT INTO webhook_deliveries (id, event_id, subscription_id, status, attempt_count, manual, created_at)
     SELECT 'dlv_' || x || s, 'msg_' || x, s, CASE WHEN x % 100 = 0 THEN 'pending' ELSE 'succeeded' END, 1, false, now()
     FROM generate_series(1, $1::int) AS x, (VALUES ('whk_a'), ('whk_b')) AS v(s)`,
    [events],
  );
}
