/**
 * The store contract for changing plants, below HTTP, on every backend: versions
 * (new on every change, kept by a replay or a no-op, never reused after a delete),
 * merge updates, preconditions decided by the database (of 50 writers expecting one
 * version exactly one wins), conditional deletes, and the plant.updated and
 * plant.deleted events written with the change, to the subscriptions that chose them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ClaimedDelivery, Store } from '../../src/store/types.js';
import { testBackends, type OpenedTestStore } from '../support/backends.js';
import { listed } from '../support/pages.js';

for (const backend of testBackends())
  describe(`changing plants in the store [${backend.name}]`, () => {
    let opened: OpenedTestStore;
    let store: Store;
    before(async () => {
      opened = await backend.open();
      store = opened.store;
    });
    after(() => opened?.cleanup());

    const create = async (id: bigint, name: string, tag?: string) => {
      const outcome = await store.plants.createPlant(tag === undefined ? { id, name } : { id, name, tag });
      assert.equal(outcome.kind, 'created');
      return outcome.kind === 'created' ? outcome.plant.version : -1n;
    };

    describe('versions', () => {
      it('a create has a version, which a read, a replay and a conflict all report', async () => {
        const version = await create(100n, 'Fern', 'shade');
        assert.equal(typeof version, 'bigint');
        assert.deepEqual(await store.plants.getPlant(100n), { id: 100n, name: 'Fern', tag: 'shade', version });
        assert.deepEqual(await store.plants.createPlant({ id: 100n, name: 'Fern', tag: 'shade' }), {
          kind: 'replayed',
          plant: { id: 100n, name: 'Fern', tag: 'shade', version },
        });
        assert.deepEqual(await store.plants.createPlant({ id: 100n, name: 'Other' }), {
          kind: 'conflict',
          existing: { id: 100n, name: 'Fern', tag: 'shade', version },
        });
      });

      it('a plant deleted and created again never gets a version it had', async () => {
        const seen = new Set<bigint>();
        for (let round = 0; round < 5; round++) {
          const version = await create(101n, 'again');
          assert.ok(!seen.has(version), `version ${version} came back`);
          seen.add(version);
          assert.equal((await store.plants.deletePlant(101n)).kind, 'deleted');
        }
      });
    });

    describe('updates', () => {
      it('merges: a name alone keeps the tag; a tag of null removes it; each change has a new, higher version', async () => {
        const v1 = await create(200n, 'Monstera', 'houseplant');
        const renamed = await store.plants.updatePlant({ id: 200n, name: 'Monstera deliciosa' });
        assert.equal(renamed.kind, 'updated');
        const v2 = renamed.kind === 'updated' ? renamed.plant.version : 0n;
        assert.ok(v2 > v1);
        assert.deepEqual(renamed, {
          kind: 'updated',
          plant: { id: 200n, name: 'Monstera deliciosa', tag: 'houseplant', version: v2 },
        });
        const untagged = await store.plants.updatePlant({ id: 200n, tag: null });
        assert.equal(untagged.kind, 'updated');
        const v3 = untagged.kind === 'updated' ? untagged.plant.version : 0n;
        assert.ok(v3 > v2);
        assert.deepEqual(await store.plants.getPlant(200n), { id: 200n, name: 'Monstera deliciosa', version: v3 });
        const retagged = await store.plants.updatePlant({ id: 200n, name: 'M', tag: 'big' });
        assert.deepEqual(retagged.kind === 'updated' && { ...retagged.plant, version: 0n }, {
          id: 200n,
          name: 'M',
          tag: 'big',
          version: 0n,
        });
      });

      it('the tag filter follows every kind of change: a rename, a new tag, a removed tag, both at once', async () => {
        const tagged = async (tag: string) =>
          (await listed(store, { limit: 10, tags: [tag] })).map((plant) => plant.id);
        await create(210n, 'Fern', 'fern-shade');
        await store.plants.updatePlant({ id: 210n, name: 'Boston fern' });
        assert.deepEqual(await tagged('fern-shade'), [210n], 'a rename keeps the plant under its tag');
        await store.plants.updatePlant({ id: 210n, tag: 'fern-sun' });
        assert.deepEqual([await tagged('fern-shade'), await tagged('fern-sun')], [[], [210n]], 'a new tag moves it');
        await store.plants.updatePlant({ id: 210n, tag: null });
        assert.deepEqual(await tagged('fern-sun'), [], 'a removed tag takes it out');
        await store.plants.updatePlant({ id: 210n, name: 'Sword fern', tag: 'fern-shade' });
        assert.deepEqual(await listed(store, { limit: 10, tags: ['fern-shade'] }), [
          { id: 210n, name: 'Sword fern', tag: 'fern-shade' },
        ]);
      });

      it('a change that changes nothing is unchanged and keeps the version', async () => {
        const version = await create(201n, 'Aloe', 'succulent');
        for (const change of [
          { id: 201n },
          { id: 201n, name: 'Aloe' },
          { id: 201n, tag: 'succulent' },
          { id: 201n, name: 'Aloe', tag: 'succulent' },
        ]) {
          assert.deepEqual(
            await store.plants.updatePlant(change),
            { kind: 'unchanged', plant: { id: 201n, name: 'Aloe', tag: 'succulent', version } },
            JSON.stringify(change, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)),
          );
        }
        const untagged = await create(202n, 'Bare');
        assert.deepEqual(await store.plants.updatePlant({ id: 202n, tag: null }), {
          kind: 'unchanged',
          plant: { id: 202n, name: 'Bare', version: untagged },
        });
      });

      it('an absent plant is not found, with or without a precondition', async () => {
        assert.deepEqual(await store.plants.updatePlant({ id: 299n, name: 'x' }), { kind: 'not-found' });
        assert.deepEqual(await store.plants.updatePlant({ id: 299n, name: 'x' }, 'any'), { kind: 'not-found' });
        assert.deepEqual(await store.plants.updatePlant({ id: 299n, name: 'x' }, [1n]), { kind: 'not-found' });
      });

      it('a precondition on another version fails and changes nothing; the current version, any, or a list holding it passes', async () => {
        const version = await create(203n, 'Cactus');
        const current = { id: 203n, name: 'Cactus', version };
        assert.deepEqual(await store.plants.updatePlant({ id: 203n, name: 'No' }, [version + 1000n]), {
          kind: 'precondition-failed',
          current,
        });
        assert.deepEqual(await store.plants.getPlant(203n), current);
        const a = await store.plants.updatePlant({ id: 203n, name: 'Yes' }, [version + 1000n, version]);
        assert.equal(a.kind, 'updated');
        const b = await store.plants.updatePlant({ id: 203n, name: 'Any' }, 'any');
        assert.equal(b.kind, 'updated');
        // A no-op with a stale version is still a failed precondition.
        const now = b.kind === 'updated' ? b.plant : current;
        assert.deepEqual(await store.plants.updatePlant({ id: 203n, name: 'Any' }, [version]), {
          kind: 'precondition-failed',
          current: now,
        });
      });

      it('50 concurrent updates expecting one version: exactly one is applied, 49 fail their precondition', async () => {
        const version = await create(204n, 'race');
        const outcomes = await Promise.all(
          Array.from({ length: 50 }, (_, i) => store.plants.updatePlant({ id: 204n, name: `writer ${i}` }, [version])),
        );
        const winners = outcomes.filter((o) => o.kind === 'updated');
        assert.equal(winners.length, 1, JSON.stringify(outcomes.map((o) => o.kind)));
        assert.equal(outcomes.filter((o) => o.kind === 'precondition-failed').length, 49);
        const stored = await store.plants.getPlant(204n);
        assert.deepEqual(stored, winners[0]?.kind === 'updated' ? winners[0].plant : undefined);
      });
    });

    describe('creates, changes and deletes of one id sent together', () => {
      type Operation = { op: 'create'; name: string } | { op: 'update'; name: string } | { op: 'delete' };
      const operations: Operation[] = [
        { op: 'create', name: 'A' },
        { op: 'create', name: 'A' },
        { op: 'update', name: 'B' },
        { op: 'create', name: 'A' },
        { op: 'delete' },
        { op: 'create', name: 'A' },
        { op: 'update', name: 'C' },
      ];

      /** The outcomes of the operations applied one by one in `order`, and the name left stored. */
      function serially(order: readonly number[]): { kinds: string[]; name: string | undefined } {
        let name: string | undefined;
        const kinds: string[] = [];
        for (const index of order) {
          const operation = operations[index] as Operation;
          if (operation.op === 'create')
            kinds[index] =
              name === undefined
                ? ((name = operation.name), 'created')
                : name === operation.name
                  ? 'replayed'
                  : 'conflict';
          else if (operation.op === 'update')
            kinds[index] =
              name === undefined
                ? 'not-found'
                : name === operation.name
                  ? 'unchanged'
                  : ((name = operation.name), 'updated');
          else kinds[index] = name === undefined ? 'not-found' : ((name = undefined), 'deleted');
        }
        return { kinds, name };
      }

      function* orders(rest: readonly number[]): Generator<number[]> {
        if (rest.length === 0) yield [];
        for (const first of rest) for (const tail of orders(rest.filter((i) => i !== first))) yield [first, ...tail];
      }

      it("get the outcomes of the operations applied one by one in some order, and leave that order's plant", async () => {
        for (let round = 0; round < 5; round++) {
          const id = BigInt(400 + round);
          const outcomes = await Promise.all(
            operations.map((operation) =>
              operation.op === 'create'
                ? store.plants.createPlant({ id, name: operation.name })
                : operation.op === 'update'
                  ? store.plants.updatePlant({ id, name: operation.name })
                  : store.plants.deletePlant(id),
            ),
          );
          const kinds = outcomes.map((outcome) => outcome.kind);
          const name = (await store.plants.getPlant(id))?.name;
          const explained = [...orders(operations.map((_, i) => i))].some((order) => {
            const serial = serially(order);
            return serial.name === name && serial.kinds.every((kind, i) => kind === kinds[i]);
          });
          assert.ok(
            explained,
            `round ${round}: ${JSON.stringify(kinds)} leaving ${name ?? 'no plant'} is no order of ${JSON.stringify(operations)}`,
          );
          // One writer thread applies a batch in arrival order: on SQLite that order is the one sent.
          if (backend.name === 'sqlite') assert.deepEqual({ kinds, name }, serially(operations.map((_, i) => i)));
        }
      });
    });

    describe('deletes', () => {
      it('a delete expecting another version fails and keeps the plant; expecting its version, or any, deletes it', async () => {
        const version = await create(300n, 'Ivy');
        assert.deepEqual(await store.plants.deletePlant(300n, [version + 1n]), {
          kind: 'precondition-failed',
          current: { id: 300n, name: 'Ivy', version },
        });
        assert.equal((await store.plants.getPlant(300n))?.version, version);
        assert.deepEqual(await store.plants.deletePlant(300n, [version]), { kind: 'deleted' });
        assert.deepEqual(await store.plants.deletePlant(300n, 'any'), { kind: 'not-found' });
        await create(301n, 'Palm');
        assert.deepEqual(await store.plants.deletePlant(301n, 'any'), { kind: 'deleted' });
      });
    });

    describe('events', () => {
      const claim = async (): Promise<ClaimedDelivery[]> => {
        const claimed = await store.webhooks.claimDueDeliveries({
          now: new Date(Date.now() + 1000),
          limit: 1000,
          leaseMs: 60_000,
          owner: 'test',
        });
        for (const delivery of claimed) {
          await store.webhooks.recordAttempt({
            deliveryId: delivery.deliveryId,
            leaseOwner: delivery.leaseOwner,
            attempt: { attempt: delivery.attempt, attemptedAt: new Date(), latencyMs: 1, responseStatus: 200 },
            outcome: { kind: 'succeeded' },
          });
        }
        return claimed;
      };
      const seen = (deliveries: ClaimedDelivery[]) =>
        deliveries.map((d) => `${d.subscriptionId} ${d.eventType} ${d.payload}`).sort();

      it('each change writes its event for the subscriptions that chose its type, none for a no-op, a failed precondition or a replay', async () => {
        const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
        await store.webhooks.insertSubscription({
          id: 'whk_all',
          url: 'https://example.com/all',
          secret,
          eventTypes: ['plant.created', 'plant.updated', 'plant.deleted'],
          createdAt: new Date(),
        });
        await store.webhooks.insertSubscription({
          id: 'whk_created',
          url: 'https://example.com/created',
          secret,
          eventTypes: ['plant.created'],
          createdAt: new Date(),
        });
        await store.webhooks.insertSubscription({
          id: 'whk_changes',
          url: 'https://example.com/changes',
          secret,
          eventTypes: ['plant.updated', 'plant.deleted'],
          createdAt: new Date(),
        });
        assert.deepEqual((await store.webhooks.getSubscription('whk_changes'))?.eventTypes, [
          'plant.updated',
          'plant.deleted',
        ]);
        await claim();

        const id = 9223372036854775807n;
        const version = await create(id, 'Big', 'x');
        await store.plants.createPlant({ id, name: 'Big', tag: 'x' });
        assert.deepEqual(seen(await claim()), [
          `whk_all plant.created {"id":${id},"name":"Big","tag":"x"}`,
          `whk_created plant.created {"id":${id},"name":"Big","tag":"x"}`,
        ]);

        await store.plants.updatePlant({ id, name: 'Big "one"', tag: null });
        await store.plants.updatePlant({ id, name: 'Big "one"' });
        await store.plants.updatePlant({ id, name: 'stale' }, [version]);
        assert.deepEqual(seen(await claim()), [
          `whk_all plant.updated {"id":${id},"name":"Big \\"one\\""}`,
          `whk_changes plant.updated {"id":${id},"name":"Big \\"one\\""}`,
        ]);

        await store.plants.deletePlant(id, [version]);
        await store.plants.deletePlant(id);
        await store.plants.deletePlant(id);
        assert.deepEqual(seen(await claim()), [
          `whk_all plant.deleted {"id":${id}}`,
          `whk_changes plant.deleted {"id":${id}}`,
        ]);
      });
    });
  });
