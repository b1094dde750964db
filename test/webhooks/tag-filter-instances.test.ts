/**
 * The tag filter under concurrent changes of one plant's tag (from three PostgreSQL instances at once; SQLite's one
 * writer takes them in turn): every plant.updated event records the tag the change really replaced, so the events
 * chain from the first tag to the last, and a filtered subscription has a delivery for exactly the events whose
 * tag after or before is its own.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { Store } from '../../src/store/types.js';
import { createSubscription } from '../../src/webhooks/subscriptions.js';
import { testBackends } from '../support/backends.js';
import { selectColumn } from './database.js';

const TAGS = ['a', 'b', 'c'] as const;
const CHANGES_PER_WRITER = 40;

for (const backend of testBackends())
  describe(`the tag filter under concurrent changes [${backend.name}]`, () => {
    it('records the replaced tag of each change, and delivers by it', async () => {
      const opened = await backend.open();
      const others =
        backend.name === 'postgres'
          ? await Promise.all(
              [1, 2].map(() => PostgresStore.open({ url: opened.databaseUrl, poolSize: 3, idleTimeoutMs: 1000 })),
            )
          : [];
      try {
        const stores: Store[] = [opened.store, ...others];
        const subscription = await createSubscription(
          opened.store.webhooks,
          { url: 'http://127.0.0.1:9/hook', eventTypes: ['plant.updated'], tag: 'a' },
          { allowPrivate: true },
        );
        await opened.store.plants.createPlant({ id: 1n, name: 'Contested', tag: 'a' });
        // Several writers per instance, each setting tags in its own order, all at once.
        await Promise.all(
          stores.flatMap((store, s) =>
            [0, 1].map(async (w) => {
              for (let i = 0; i < CHANGES_PER_WRITER; i += 1) {
                const tag = TAGS[(i + s + w) % TAGS.length] as string;
                await store.plants.updatePlant({ id: 1n, tag });
              }
            }),
          ),
        );
        const final = (await opened.store.plants.getPlant(1n))?.tag;
        const transitions = (await selectColumn(
          opened.databaseUrl,
          "SELECT previous_tag || '>' || tag FROM webhook_events WHERE type = 'plant.updated'",
        )) as string[];
        assert.ok(transitions.length > 0);
        for (const transition of transitions) {
          const [before, after] = transition.split('>');
          assert.notEqual(before, after, `a change of the tag replaced another tag: ${transition}`);
        }
        // Each change leaves the tag the next one replaces: per tag, arrivals minus departures is where it ended.
        for (const tag of TAGS) {
          const arrived = transitions.filter((t) => t.endsWith(`>${tag}`)).length;
          const left = transitions.filter((t) => t.startsWith(`${tag}>`)).length;
          assert.equal(
            arrived - left,
            (tag === final ? 1 : 0) - (tag === 'a' ? 1 : 0),
            `${tag}: ${transitions.join(' ')}`,
          );
        }
        const delivered = (await selectColumn(
          opened.databaseUrl,
          `SELECT e.previous_tag || '>' || e.tag FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
           WHERE d.subscription_id = '${subscription.id}'`,
        )) as string[];
        assert.deepEqual(delivered.sort(), transitions.filter((t) => t.split('>').includes('a')).sort());
      } finally {
        await Promise.all(others.map((store) => store.close()));
        await opened.cleanup();
      }
    });
  });
