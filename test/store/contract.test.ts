/**
 * The store contract, below HTTP, on every backend (SQLite, and PostgreSQL when it
 * is reachable; CI requires it): exact int64 at both ends, creates decided by the
 * store (replay, conflict, concurrent creates of one id, creates racing deletes),
 * tokens, and closing. What only one backend has (PostgreSQL's column types, its
 * statement timeout, its error classification) is tested beside that backend.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { StoreUnavailableError } from '../../src/store/errors.js';
import type { CreatePlantOutcome, NewTokenRecord, Store } from '../../src/store/types.js';
import { testBackends, type OpenedTestStore } from '../support/backends.js';
import { unversioned } from '../support/assertions.js';
import { listed } from '../support/pages.js';

const MIN_INT64 = -9223372036854775808n;
const MAX_INT64 = 9223372036854775807n;

for (const backend of testBackends())
  describe(`store contract [${backend.name}]`, () => {
    let opened: OpenedTestStore;
    let store: Store;
    before(async () => {
      opened = await backend.open();
      store = opened.store;
    });
    after(() => opened?.cleanup());

    describe('int64 ids', () => {
      for (const id of [
        MIN_INT64,
        MAX_INT64,
        MIN_INT64 + 1n,
        MAX_INT64 - 1n,
        9007199254740993n,
        -9007199254740993n,
        0n,
      ]) {
        it(`stores, reads, lists and deletes ${id} exactly, as a bigint`, async () => {
          assert.equal((await store.plants.createPlant({ id, name: `n${id}` })).kind, 'created');
          const read = await store.plants.getPlant(id);
          assert.equal(typeof read?.id, 'bigint');
          assert.deepEqual(unversioned(read), { id, name: `n${id}` });
          const page = await listed(store, { limit: 1, after: id - 1n >= MIN_INT64 ? id - 1n : undefined });
          assert.deepEqual(page[0], { id, name: `n${id}` });
          assert.equal((await store.plants.deletePlant(id)).kind, 'deleted');
          assert.equal((await store.plants.deletePlant(id)).kind, 'not-found');
        });
      }

      it('orders by signed 64-bit value across the whole range', async () => {
        const ids = [MAX_INT64, 0n, -1n, MIN_INT64, 9007199254740993n, 9007199254740992n, -9007199254740993n];
        for (const id of ids) await store.plants.createPlant({ id, name: 'order' });
        const inOrder = (await listed(store, { limit: 100 })).map((p) => p.id);
        assert.deepEqual(
          inOrder,
          [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
        );
        const afterMinusOne = (await listed(store, { limit: 100, after: -1n })).map((p) => p.id);
        assert.deepEqual(afterMinusOne, [0n, 9007199254740992n, 9007199254740993n, MAX_INT64]);
        for (const id of ids) await store.plants.deletePlant(id);
      });
    });

    describe('creates', () => {
      it('stores tags, omits absent ones, and answers replay and conflict', async () => {
        assert.deepEqual(unversioned(await store.plants.createPlant({ id: 10n, name: 'Fern', tag: 'shade' })), {
          kind: 'created',
          plant: { id: 10n, name: 'Fern', tag: 'shade' },
        });
        assert.deepEqual(unversioned(await store.plants.createPlant({ id: 10n, name: 'Fern', tag: 'shade' })), {
          kind: 'replayed',
          plant: { id: 10n, name: 'Fern', tag: 'shade' },
        });
        assert.deepEqual(unversioned(await store.plants.createPlant({ id: 10n, name: 'Fern' })), {
          kind: 'conflict',
          existing: { id: 10n, name: 'Fern', tag: 'shade' },
        });
        assert.deepEqual(unversioned(await store.plants.createPlant({ id: 11n, name: 'Aloe' })), {
          kind: 'created',
          plant: { id: 11n, name: 'Aloe' },
        });
        assert.deepEqual(unversioned(await store.plants.getPlant(11n)), { id: 11n, name: 'Aloe' });
        assert.deepEqual(await listed(store, { limit: 10, tags: ['shade'] }), [
          { id: 10n, name: 'Fern', tag: 'shade' },
        ]);
      });

      it('100 parallel identical creates of one id: one created, 99 replayed, one row', async () => {
        const outcomes = await Promise.all(
          Array.from({ length: 100 }, () => store.plants.createPlant({ id: MAX_INT64, name: 'same', tag: 't' })),
        );
        assert.equal(outcomes.filter((o) => o.kind === 'created').length, 1);
        assert.equal(outcomes.filter((o) => o.kind === 'replayed').length, 99);
        const stored = await listed(store, { limit: 10, after: MAX_INT64 - 1n });
        assert.deepEqual(stored, [{ id: MAX_INT64, name: 'same', tag: 't' }]);
      });

      it('100 parallel creates of one id with three different contents: one winner, the rest replayed or in conflict by content', async () => {
        const variants = [{ name: 'a' }, { name: 'a', tag: 'x' }, { name: 'b' }];
        const requests = Array.from({ length: 100 }, (_, i) => ({ id: MIN_INT64, ...variants[i % 3]! }));
        const outcomes: CreatePlantOutcome[] = await Promise.all(
          requests.map((plant) => store.plants.createPlant(plant)),
        );
        const stored = await store.plants.getPlant(MIN_INT64);
        assert.ok(stored !== undefined);
        assert.equal(outcomes.filter((o) => o.kind === 'created').length, 1);
        requests.forEach((plant, i) => {
          const same = plant.name === stored.name && plant.tag === stored.tag;
          const outcome = outcomes[i]!;
          if (same)
            assert.ok(outcome.kind === 'created' || outcome.kind === 'replayed', `request ${i}: ${outcome.kind}`);
          else assert.deepEqual(outcome, { kind: 'conflict', existing: stored }, `request ${i}`);
        });
      });

      it('a create racing deletes of the same id never fails: it creates, replays or conflicts', async () => {
        const id = 4242n;
        const deadline = Date.now() + 3000;
        let rounds = 0;
        while (rounds < 50 && Date.now() < deadline) {
          rounds += 1;
          const results = await Promise.all([
            store.plants.createPlant({ id, name: 'racer' }),
            store.plants.deletePlant(id),
            store.plants.createPlant({ id, name: 'racer' }),
            store.plants.deletePlant(id),
            store.plants.createPlant({ id, name: 'other' }),
          ]);
          for (const result of [results[0], results[2], results[4]] as CreatePlantOutcome[]) {
            assert.ok(['created', 'replayed', 'conflict'].includes(result.kind));
          }
        }
        assert.ok(rounds > 0);
      });
    });

    describe('tokens', () => {
      const token = (name: string, overrides: Partial<NewTokenRecord> = {}): NewTokenRecord => ({
        id: `tok_${name}`,
        name,
        secretHash: `hash-${name}`,
        scopes: ['plants:read', 'plants:write'],
        createdAt: new Date(Date.UTC(2030, 0, 1, 12, 0, 0, 123)),
        expiresAt: null,
        createdBy: null,
        ...overrides,
      });

      it('inserts once per name, finds by hash with every field exact, and counts', async () => {
        const expiresAt = new Date(Date.UTC(2031, 5, 6, 7, 8, 9, 987));
        assert.equal(await store.tokens.insertToken(token('alpha', { expiresAt })), 'inserted');
        assert.equal(
          await store.tokens.insertToken(token('alpha', { id: 'tok_other', secretHash: 'other' })),
          'name-taken',
        );
        assert.deepEqual(await store.tokens.findTokenBySecretHash('hash-alpha'), {
          id: 'tok_alpha',
          name: 'alpha',
          scopes: ['plants:read', 'plants:write'],
          createdAt: new Date(Date.UTC(2030, 0, 1, 12, 0, 0, 123)),
          expiresAt,
          lastUsedAt: null,
          revokedAt: null,
          createdBy: null,
        });
        assert.equal(await store.tokens.findTokenBySecretHash('nope'), undefined);
        assert.equal(await store.tokens.countTokens(), 1);
      });

      it('refuses a second token with the same secret hash', async () => {
        await assert.rejects(
          store.tokens.insertToken(token('beta', { secretHash: 'hash-alpha' })),
          (error: unknown) => {
            assert.ok(!(error instanceof StoreUnavailableError));
            return true;
          },
        );
      });

      it('revokes by id or by name, keeping the first revocation time; records use', async () => {
        await store.tokens.insertToken(token('gamma'));
        const first = new Date(Date.UTC(2032, 0, 1));
        assert.deepEqual((await store.tokens.revokeToken('tok_gamma', first))?.token.revokedAt, first);
        const again = await store.tokens.revokeToken('gamma', new Date(Date.UTC(2033, 0, 1)));
        assert.deepEqual(again?.token.revokedAt, first);
        assert.equal(await store.tokens.revokeToken('missing', first), undefined);
        const used = new Date(Date.UTC(2032, 1, 2, 3, 4, 5, 6));
        await store.tokens.recordTokenUse('tok_alpha', used);
        assert.deepEqual((await store.tokens.findTokenBySecretHash('hash-alpha'))?.lastUsedAt, used);
      });

      it('lists by creation time, then id in byte order', async () => {
        const at = new Date(Date.UTC(2029, 0, 1));
        await store.tokens.insertToken(token('lower', { id: 'tok_a', createdAt: at }));
        await store.tokens.insertToken(token('upper', { id: 'tok_B', createdAt: at }));
        const ids = (await store.tokens.listTokens()).map((t) => t.id).filter((id) => id === 'tok_a' || id === 'tok_B');
        assert.deepEqual(ids, ['tok_B', 'tok_a']);
      });

      it('records who created a token; revoking one revokes its descendants, and only them', async () => {
        await store.tokens.insertToken(token('parent'));
        await store.tokens.insertToken(token('kid', { createdBy: 'tok_parent' }));
        await store.tokens.insertToken(token('grandkid', { createdBy: 'tok_kid' }));
        await store.tokens.insertToken(token('cousin', { createdBy: 'tok_alpha' }));
        assert.equal((await store.tokens.findTokenBySecretHash('hash-grandkid'))?.createdBy, 'tok_kid');
        const at = new Date(Date.UTC(2034, 0, 1));
        const revoked = await store.tokens.revokeToken('parent', at);
        assert.equal(revoked?.token.id, 'tok_parent');
        assert.deepEqual([...(revoked?.descendantIds ?? [])].sort(), ['tok_grandkid', 'tok_kid']);
        for (const name of ['kid', 'grandkid']) {
          assert.deepEqual((await store.tokens.findTokenBySecretHash(`hash-${name}`))?.revokedAt, at, name);
        }
        assert.equal((await store.tokens.findTokenBySecretHash('hash-cousin'))?.revokedAt, null);
        assert.equal((await store.tokens.findTokenBySecretHash('hash-alpha'))?.revokedAt, null);
      });

      it('stores no token whose creator is revoked', async () => {
        await store.tokens.insertToken(token('revoked-creator'));
        await store.tokens.revokeToken('revoked-creator', new Date());
        const outcome = await store.tokens.insertToken(token('orphan', { createdBy: 'tok_revoked-creator' }));
        assert.equal(outcome, 'creator-revoked');
        assert.equal(await store.tokens.findTokenBySecretHash('hash-orphan'), undefined);
        assert.equal(await store.tokens.insertToken(token('orphan', { createdBy: 'tok_missing' })), 'creator-revoked');
      });

      it('a revocation racing with tokens being created under it leaves none of them usable', async () => {
        for (let round = 0; round < 5; round++) {
          const root = `race-${round}`;
          await store.tokens.insertToken(token(root));
          await store.tokens.insertToken(token(`${root}-kid`, { createdBy: `tok_${root}` }));
          const births = Array.from({ length: 12 }, (_, i) =>
            store.tokens.insertToken(token(`${root}-grandkid-${i}`, { createdBy: `tok_${root}-kid` })),
          );
          const [outcomes] = await Promise.all([
            Promise.all(births),
            store.tokens.revokeToken(root, new Date(Date.UTC(2035, 0, 1))),
          ]);
          for (const outcome of outcomes) assert.ok(outcome === 'inserted' || outcome === 'creator-revoked', outcome);
          const lineage = (await store.tokens.listTokens()).filter((t) => t.name.startsWith(`${root}-`));
          assert.ok(lineage.length >= 1);
          for (const t of lineage) assert.notEqual(t.revokedAt, null, `${t.name} outlived its creator's revocation`);
        }
      });
    });

    describe('closing', () => {
      it('answers ping; once closed, ping and reads reject with StoreUnavailableError (a 503, not a 500)', async () => {
        await store.ping();
        const other = await backend.open();
        await other.store.close();
        await other.store.close();
        await assert.rejects(other.store.ping(), StoreUnavailableError);
        await assert.rejects(other.store.plants.getPlant(1n), StoreUnavailableError);
        await assert.rejects(other.store.plants.listPlantsPage({ limit: 10 }), StoreUnavailableError);
        await other.cleanup();
      });
    });
  });
