/**
 * `plantstore copy`: a SQLite store filled through the real store API (int64 extremes, unicode, changed and
 * deleted plants, tokens in every state, a rotated webhook secret, a disabled subscription, recoveries, response
 * bodies, deliveries pending, retried, finished and leased) is copied to PostgreSQL and back, and every column of
 * every table (as the catalogue lists them) compared row by row; the copies then serve as stores. Refusals,
 * failures and a copy that does not verify leave the target as it was. Real SQLite files and a fresh PostgreSQL
 * schema per store.
 */
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { copyBetween, copyStore, CopyError } from '../../src/store/copy/copy-store.js';
import type { CopyTarget } from '../../src/store/copy/endpoint.js';
import { openSource, openTarget } from '../../src/store/copy/open-endpoints.js';
import { COPY_TABLES, type CopyRows, type CopyTable } from '../../src/store/copy/rows.js';
import { StoreTooNewError } from '../../src/store/errors.js';
import { openStore } from '../../src/store/open-store.js';
import type { ListPlantsQuery, Store, WebhookDelivery } from '../../src/store/types.js';
import { TokenAuthenticator } from '../../src/tokens/authenticator.js';
import { issueToken } from '../../src/tokens/token-service.js';
import { postgresAvailable } from '../support/backends.js';
import { createTestSchema, withAdminClient, type TestSchema } from '../support/postgres.js';
import { runCli } from '../support/service-process.js';
import { tempDir } from '../support/temp.js';
import { importRows } from '../support/plant-rows.js';

const MIN = -9223372036854775808n;
const MAX = 9223372036854775807n;
const HOUR = 3_600_000;
/** How many plants fill() leaves. */
const PLANTS = 45;
const postgres = postgresAvailable();

// ---- the store to copy ----------------------------------------------------------

interface Filled {
  readonly secrets: { readonly active: string; readonly revoked: string; readonly expiring: string };
  readonly subscriptionIds: readonly string[];
}

async function fill(store: Store): Promise<Filled> {
  // Two subscriptions created in one millisecond: only their seq orders them.
  const createdAt = new Date();
  const first = 'whk_copy_all_types',
    second = 'whk_copy_created_only';
  await store.webhooks.insertSubscription({
    id: first,
    url: 'https://example.com/all',
    secret: 'whsec_Zmlyc3Qgc2VjcmV0IGZvciB0aGUgY29weSB0ZXN0',
    description: 'every type ✓',
    eventTypes: ['plant.created', 'plant.updated', 'plant.deleted'],
    createdAt,
    // Throttled: the claim below counts its deliveries on its row, and the copy carries that count.
    maxPerSecond: 40,
  });
  await store.webhooks.insertSubscription({
    id: second,
    url: 'https://example.com/created',
    secret: 'whsec_c2Vjb25kIHNlY3JldCBmb3IgdGhlIGNvcHk=',
    eventTypes: ['plant.created'],
    createdAt,
  });

  const plants = [
    { id: MIN, name: 'Minimum', tag: 'edge' },
    { id: MAX, name: 'Maximum', tag: 'edge' },
    { id: 0n, name: 'Zero' },
    { id: 9007199254740993n, name: 'Beyond a double (2^53 + 1)' },
    { id: -1n, name: 'Ærø 🌿 Café', tag: 'ünïcödé' },
    { id: 77n, name: '日本の植物' },
    { id: 78n, name: 'Say "hi", {braces} \\ back\'slash', tag: 'a,b' },
    ...Array.from({ length: 40 }, (_, i) => ({
      id: BigInt(1000 + i),
      name: `Plant ${i} ${i % 3 === 0 ? 'Monstera' : 'Ficus'}`,
      ...(i % 2 === 0 ? { tag: `t${i % 5}` } : {}),
    })),
  ];
  for (const plant of plants) assert.equal((await store.plants.createPlant(plant)).kind, 'created');
  assert.equal((await store.plants.updatePlant({ id: MAX, name: 'Maximum, renamed' })).kind, 'updated');
  assert.equal((await store.plants.updatePlant({ id: 1004n, tag: null })).kind, 'updated');
  assert.equal((await store.plants.updatePlant({ id: 1006n, name: 'Twice' })).kind, 'updated');
  assert.equal((await store.plants.updatePlant({ id: 1006n, tag: 'again' })).kind, 'updated');
  assert.equal((await store.plants.deletePlant(1007n)).kind, 'deleted');
  assert.equal((await store.plants.deletePlant(1008n)).kind, 'deleted');

  const active = await issueToken(store.tokens, { name: 'active', scopes: ['plants:read', 'plants:write'] });
  const revoked = await issueToken(store.tokens, { name: 'revoked', scopes: ['admin'] });
  const expiring = await issueToken(store.tokens, {
    name: 'expiring',
    scopes: ['plants:read'],
    expiresInMs: 24 * HOUR,
  });
  await store.tokens.revokeToken('revoked', new Date());
  await store.tokens.recordTokenUse(active.record.id, new Date());

  assert.equal(
    await store.webhooks.rotateSecret(first, 'whsec_cm90YXRlZCBzZWNyZXQgZm9yIHRoZSBjb3B5', new Date(Date.now() + HOUR)),
    true,
  );

  // Deliveries in every state: succeeded, retrying (with its error), failed, and one still leased.
  const now = new Date();
  const claimed = await store.webhooks.claimDueDeliveries({ now, limit: 4, leaseMs: 60_000, owner: 'copy-test' });
  assert.equal(claimed.length, 4);
  const outcomes = [
    { kind: 'succeeded' },
    { kind: 'retry', nextAttemptAt: new Date(now.getTime() + 30_000) },
    { kind: 'failed' },
  ] as const;
  for (const [i, outcome] of outcomes.entries()) {
    const delivery = claimed[i]!;
    await store.webhooks.recordAttempt({
      deliveryId: delivery.deliveryId,
      leaseOwner: delivery.leaseOwner,
      outcome,
      attempt: {
        attempt: 1,
        attemptedAt: now,
        latencyMs: 12 + i,
        ...(outcome.kind === 'succeeded'
          ? { responseStatus: 204 }
          : {
              responseStatus: 500,
              error: 'HTTP 500',
              responseBody: '{"oops":"✗"}',
              responseContentType: 'application/json',
            }),
      },
    });
  }

  // The subscription controls: one disabled by hand (at version 2), one failing, and a recovery of each kind.
  const disabled = await store.webhooks.updateSubscription(
    second,
    { enabled: false, disabledReason: 'paused by hand' },
    [1],
    now,
  );
  assert.equal(disabled.kind, 'updated');
  const since = new Date(now.getTime() - HOUR);
  for (const [windowKey, until] of [
    ['a-window', now],
    ['another-window', new Date(now.getTime() + 1)],
  ] as const) {
    const started = await store.webhooks.startRecovery({
      id: `rcv_copy_${windowKey}`,
      subscriptionId: first,
      windowKey,
      since,
      until,
      now,
    });
    assert.ok(started?.created);
  }
  assert.ok(await store.webhooks.recoverBatch('rcv_copy_a-window', now, 100));
  return {
    secrets: { active: active.secret, revoked: revoked.secret, expiring: expiring.secret },
    subscriptionIds: [first, second],
  };
}

/** What the store API answers for the source, to ask the copies the same. */
interface Answers {
  readonly cursorSecret: string;
  readonly pages: readonly string[];
  readonly max: unknown;
  readonly deliveries: readonly (readonly WebhookDelivery[])[];
  readonly subscriptions: unknown;
  readonly tokens: unknown;
  readonly pending: number;
}

const QUERIES: readonly ListPlantsQuery[] = [
  { limit: 100 },
  { limit: 5, order: 'name' },
  { limit: 100, order: '-name' },
  { limit: 100, terms: ['cafe'] },
  { limit: 100, tags: ['edge'] },
];

async function answers(store: Store, subscriptionIds: readonly string[]): Promise<Answers> {
  return {
    cursorSecret: await store.plants.pageCursorSecret(),
    pages: await Promise.all(QUERIES.map(async (query) => (await store.plants.listPlantsPage(query)).json)),
    max: await store.plants.getPlant(MAX),
    deliveries: await Promise.all(subscriptionIds.map((id) => store.webhooks.listDeliveries(id, { limit: 1000 }))),
    subscriptions: await store.webhooks.listSubscriptions(),
    tokens: await store.tokens.listTokens(),
    pending: (await store.webhooks.backlog()).pending,
  };
}

// ---- every row of every table, in one form for both databases --------------------

/**
 * Every column of every table the copy carries, as the source's catalogue lists them (a column added by a later
 * migration is compared without anyone listing it). The ordering keys: bytewise text, or a number.
 */
const KEYS: Readonly<Record<CopyTable, { readonly key: string; readonly numericKey?: true }>> = {
  store_secrets: { key: 'name' },
  tokens: { key: 'id' },
  plants: { key: 'id', numericKey: true },
  webhook_subscriptions: { key: 'id' },
  webhook_events: { key: 'id' },
  webhook_deliveries: { key: 'id' },
  webhook_delivery_attempts: { key: 'id', numericKey: true },
  webhook_recoveries: { key: 'id' },
};

/** SQLite's tables the copy does not carry (rows.ts says why), and its own. */
const NOT_CARRIED =
  /^(sqlite_|plants_search|schema_migrations$|plant_changes$|change_log_history$|plant_version_counter$)/;

/** PostgreSQL's seq is SQLite's rowid: both order rows created in one millisecond. */
const WITH_SEQ = new Set(['webhook_subscriptions', 'webhook_deliveries']);

/** The source's copied tables and their columns (SQLite's generated json column is not one: table_info skips it). */
function catalogue(path: string): Record<string, string[]> {
  const db = new Database(path, { readonly: true });
  try {
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .pluck()
      .all() as string[];
    return Object.fromEntries(
      tables
        .filter((table) => !NOT_CARRIED.test(table))
        .map((table) => {
          const columns = (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
          return [table, WITH_SEQ.has(table) ? ['seq', ...columns] : columns];
        }),
    );
  } finally {
    db.close();
  }
}

type Dump = Record<string, Record<string, string | null>[]>;

/** SQLite's forms: integer milliseconds, comma-separated lists, 0 and 1; every value as text. */
function normal(value: unknown): string | null {
  if (value === null) return null;
  if (value instanceof Date) return String(value.getTime());
  if (Array.isArray(value)) return value.join(',');
  if (typeof value === 'boolean') return value ? '1' : '0';
  return String(value);
}

const normalRows = (rows: Record<string, unknown>[]) =>
  rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, normal(v)])));

async function dump(url: string, tables: Record<string, string[]>): Promise<Dump> {
  const result: Dump = {};
  if (url.startsWith('sqlite:')) {
    const db = new Database(url.slice('sqlite:'.length), { readonly: true });
    try {
      for (const [table, columns] of Object.entries(tables)) {
        const { key } = KEYS[table as CopyTable];
        const select = columns.join(', ').replace(/^seq,/, 'rowid AS seq,');
        result[table] = normalRows(
          db.prepare(`SELECT ${select} FROM ${table} ORDER BY ${key}`).safeIntegers(true).all() as Record<
            string,
            unknown
          >[],
        );
      }
      result.version_counter = normalRows(
        db.prepare('SELECT last FROM plant_version_counter').safeIntegers(true).all() as Record<string, unknown>[],
      );
    } finally {
      db.close();
    }
    return result;
  }
  await withAdminClient(async (client) => {
    for (const [table, columns] of Object.entries(tables)) {
      const { key, numericKey } = KEYS[table as CopyTable];
      // Bytewise, as SQLite orders text.
      const order = `${key}${numericKey ? '' : ' COLLATE "C"'}`;
      result[table] = normalRows(
        (await client.query(`SELECT ${columns.join(', ')} FROM ${table} ORDER BY ${order}`)).rows,
      );
    }
    result.version_counter = normalRows(
      (
        await client.query(
          'SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END AS last FROM plant_versions',
        )
      ).rows,
    );
  }, url);
  return result;
}

async function plantCount(url: string): Promise<number> {
  return (await dump(url, { plants: ['id'] })).plants?.length ?? -1;
}

// ---- the tests -------------------------------------------------------------------

describe('plantstore copy', () => {
  const dir = tempDir('plantstore-copy-');
  const sourceUrl = `sqlite:${join(dir, 'source.db')}`;
  const backUrl = `sqlite:${join(dir, 'back.db')}`;
  const copied = () => catalogue(sourceUrl.slice('sqlite:'.length));
  const schemas: TestSchema[] = [];
  let filled: Filled;
  let before_: Answers;
  let schema: TestSchema;

  const newSchema = async () => {
    const created = await createTestSchema();
    schemas.push(created);
    return created;
  };

  before(async () => {
    const store = await openStore(sourceUrl);
    try {
      filled = await fill(store);
      before_ = await answers(store, filled.subscriptionIds);
    } finally {
      await store.close();
    }
    if (postgres) schema = await newSchema();
  });
  after(async () => {
    for (const created of schemas) await created.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('copy SQLite -> PostgreSQL -> SQLite is lossless', { skip: !postgres }, async () => {
    const there = await copyStore(sourceUrl, schema.url, { chunkSize: 7 });
    assert.deepEqual(there.differences, []);
    assert.equal(there.committed, true);
    assert.equal(there.source.counts.plants, PLANTS);
    assert.equal(there.target.plantChecksum, there.source.plantChecksum);

    const back = await copyStore(schema.url, backUrl, { chunkSize: 7 });
    assert.deepEqual(back.differences, []);
    assert.equal(back.target.plantChecksum, there.source.plantChecksum, 'the same plants, hashed on three stores');

    const tables = copied();
    assert.deepEqual(Object.keys(tables).sort(), [...COPY_TABLES].sort(), 'every table of the store is carried');
    await withAdminClient(async (client) => {
      for (const [table, columns] of Object.entries(tables)) {
        const { rows } = await client.query<{ name: string }>(
          'SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1',
          [table],
        );
        assert.deepEqual(rows.map((row) => row.name).sort(), [...columns].sort(), `${table}: the same columns on both`);
      }
    }, schema.url);
    const original = await dump(sourceUrl, tables);
    const onPostgres = await dump(schema.url, tables);
    const returned = await dump(backUrl, tables);
    for (const table of Object.keys(original)) {
      assert.ok((original[table]?.length ?? 0) > 0, `${table} has rows to compare`);
      assert.deepEqual(onPostgres[table], original[table], `${table} on PostgreSQL`);
      assert.deepEqual(returned[table], original[table], `${table} back on SQLite`);
    }
    assert.ok(
      original.plants?.some((plant) => plant.id === MIN.toString()) &&
        original.plants.some((plant) => plant.id === MAX.toString()),
    );
  });

  it('refuses a target that holds data, and leaves it as it was', { skip: !postgres }, async () => {
    for (const url of [schema.url, backUrl]) {
      const held = await dump(url, copied());
      const message = new RegExp(
        `is not empty \\(plants: ${PLANTS}, tokens: 3, webhook subscriptions: 2, webhook events: \\d+, webhook deliveries: \\d+, delivery attempts: 3, webhook recoveries: 2\\); `,
      );
      await assert.rejects(
        copyStore(sourceUrl, url),
        (error: Error) => error instanceof CopyError && message.test(error.message),
      );
      assert.deepEqual(await dump(url, copied()), held);
    }
    await assert.rejects(
      copyStore(sourceUrl, sourceUrl.replace('source.db', './source.db')),
      /--from and --to name the same store/,
    );
  });

  it(
    'makes stores that serve as the source did: plants, ETags, cursors, tokens, deliveries, new versions',
    { skip: !postgres },
    async () => {
      for (const url of [schema.url, backUrl]) {
        const store = await openStore(url);
        try {
          assert.deepEqual(await answers(store, filled.subscriptionIds), before_, url);
          const authenticator = new TokenAuthenticator(store.tokens, { cacheTtlMs: 0 });
          assert.equal((await authenticator.authenticate(filled.secrets.active)).ok, true);
          assert.equal((await authenticator.authenticate(filled.secrets.expiring)).ok, true);
          assert.deepEqual(await authenticator.authenticate(filled.secrets.revoked), { ok: false, reason: 'revoked' });

          // The counter went along: a new plant's version is one the source never gave out.
          const created = await store.plants.createPlant({ id: 5n, name: 'After the copy' });
          assert.equal(created.kind, 'created');
          const versions = (await dump(sourceUrl, copied())).plants!.map((plant) => BigInt(plant.version!));
          assert.ok(created.kind === 'created' && versions.every((version) => created.plant.version > version));

          // New outbox rows and attempts take ids past the copied ones (PostgreSQL's identities).
          const claimed = await store.webhooks.claimDueDeliveries({
            now: new Date(Date.now() + HOUR),
            limit: 1,
            leaseMs: 1000,
            owner: 'after-copy',
          });
          assert.equal(claimed.length, 1);
          const [delivery] = claimed;
          await store.webhooks.recordAttempt({
            deliveryId: delivery!.deliveryId,
            leaseOwner: 'after-copy',
            outcome: { kind: 'succeeded' },
            attempt: { attempt: 1, attemptedAt: new Date(), latencyMs: 3, responseStatus: 200 },
          });
          await store.webhooks.insertSubscription({
            id: 'whk_after_copy',
            url: 'https://example.com/later',
            secret: 'whsec_bGF0ZXI=',
            eventTypes: ['plant.created'],
            createdAt: new Date(0),
          });
          const subscriptions = await store.webhooks.listSubscriptions();
          assert.deepEqual(
            subscriptions.map((s) => s.id),
            ['whk_after_copy', ...filled.subscriptionIds],
          );
        } finally {
          await store.close();
        }
      }
    },
  );

  it('--replace empties a target that holds data, in the copy transaction', { skip: !postgres }, async () => {
    const report = await copyStore(sourceUrl, backUrl, { replace: true, chunkSize: 7 });
    assert.equal(report.committed, true);
    assert.equal(report.replaced?.plants, PLANTS + 1);
    const { version_counter: counter, ...tables } = await dump(backUrl, copied());
    const { version_counter: sourceCounter, ...sourceTables } = await dump(sourceUrl, copied());
    assert.deepEqual(tables, sourceTables);
    assert.ok(
      BigInt(counter![0]!.last!) > BigInt(sourceCounter![0]!.last!),
      'the replaced store counted further: its counter is kept',
    );
  });

  it(
    "leaves PostgreSQL's planner estimate of the plants true to their count (Prefer: count=estimated)",
    { skip: !postgres },
    async () => {
      // Above COUNT_EXACTLY_BELOW, so the estimate is answered as it is; the planner's guess from pages alone
      // (never analyzed) was a quarter short for plants like these.
      const many = 30_000;
      const manyUrl = `sqlite:${join(dir, 'many.db')}`;
      const source = await openStore(manyUrl);
      try {
        const staging = await source.plants.beginImport();
        const rows = importRows(
          Array.from({ length: many }, (_, i) => ({
            id: BigInt(i),
            name: `Plant ${i} Monstera deliciosa`,
            ...(i % 3 === 0 ? {} : { tag: `tag${i % 50}` }),
          })),
        );
        await staging.stage(rows);
        assert.equal((await staging.apply('all', 1)).kind, 'applied');
      } finally {
        await source.close();
      }
      const target = await newSchema();
      assert.equal((await copyStore(manyUrl, target.url)).committed, true);
      const store = await openStore(target.url);
      try {
        const estimate = await store.plants.countPlants({}, 'estimated');
        assert.equal(estimate.exact, false, 'an estimate, not a count');
        assert.ok(Math.abs(estimate.count - many) <= many * 0.03, `estimated ${estimate.count} for ${many} plants`);
      } finally {
        await store.close();
      }
    },
  );

  it('leaves the target as it was when the copy fails part way', { skip: !postgres }, async () => {
    const broken = await newSchema();
    await (await openStore(broken.url)).close();
    // Events are written after the plants: the failure comes with plants already inserted.
    await withAdminClient(
      (client) => client.query('ALTER TABLE webhook_events ADD CONSTRAINT refuse_events CHECK (false) NOT VALID'),
      broken.url,
    );
    await assert.rejects(copyStore(sourceUrl, broken.url, { chunkSize: 7 }), /refuse_events/);
    assert.equal(await plantCount(broken.url), 0);

    const brokenFile = `sqlite:${join(dir, 'broken.db')}`;
    await (await openStore(brokenFile)).close();
    const db = new Database(brokenFile.slice('sqlite:'.length));
    db.exec(
      "CREATE TRIGGER refuse_events BEFORE INSERT ON webhook_events BEGIN SELECT RAISE(ABORT, 'refuse_events'); END",
    );
    db.close();
    await assert.rejects(copyStore(sourceUrl, brokenFile, { chunkSize: 7 }), /refuse_events/);
    assert.equal(await plantCount(brokenFile), 0);
  });

  it('rolls back a copy that does not verify', async () => {
    const url = `sqlite:${join(dir, 'lossy.db')}`;
    const source = await openSource(sourceUrl);
    const real = await openTarget(url);
    // A target that loses the last plant of every chunk, as a bug in a writer would.
    const lossy: CopyTarget = {
      kind: real.kind,
      label: real.label,
      read: (table, after, limit) => real.read(table, after, limit),
      count: (table) => real.count(table),
      pendingDeliveries: () => real.pendingDeliveries(),
      versionCounter: () => real.versionCounter(),
      insert: <T extends CopyTable>(table: T, rows: readonly CopyRows[T][]) =>
        real.insert(table, table === 'plants' ? rows.slice(0, -1) : rows),
      clear: () => real.clear(),
      raiseVersionCounter: (last) => real.raiseVersionCounter(last),
      finish: () => real.finish(),
      commit: () => real.commit(),
      close: () => real.close(),
    };
    try {
      const report = await copyBetween(source, lossy, { chunkSize: 7 });
      assert.equal(report.committed, false);
      assert.deepEqual(report.differences, ['plants', 'plant checksum']);
      assert.equal(report.target.counts.plants, PLANTS - Math.ceil(PLANTS / 7));
    } finally {
      await lossy.close();
      await source.close();
    }
    assert.equal(await plantCount(url), 0);
  });

  it('copies one snapshot of a source that is written to meanwhile', async () => {
    const url = `sqlite:${join(dir, 'snapshot.db')}`;
    const writer = new Database(sourceUrl.slice('sqlite:'.length));
    const late = 9000000000000000000n;
    try {
      // Committed after the first chunk of plants was read, with an id the copy has not reached yet.
      const report = await copyStore(sourceUrl, url, {
        chunkSize: 7,
        onProgress: ({ phase, table, done }) => {
          if (phase === 'copy' && table === 'plants' && done === 7) {
            writer
              .prepare('INSERT INTO plants (id, name, created_at, version) VALUES (?, ?, 0, 1)')
              .run(late, 'Too late');
          }
        },
      });
      assert.equal(
        writer.prepare('SELECT count(*) FROM plants').pluck().get(),
        PLANTS + 1,
        'the write committed during the copy',
      );
      assert.equal(report.committed, true);
      assert.equal(report.source.counts.plants, PLANTS);
      assert.equal(await plantCount(url), PLANTS);
    } finally {
      writer.prepare('DELETE FROM plants WHERE id = ?').run(late);
      writer.close();
    }
  });

  describe('on the command line', () => {
    it("prints both sides' counts and checksums, progress on stderr, and refuses a second copy", async () => {
      const url = `sqlite:${join(dir, 'cli.db')}`;
      const run = await runCli(['copy', '--from', sourceUrl, '--to', url], {}, {}, { timeout: 30_000 });
      assert.equal(run.code, 0, run.stderr);
      const lines = run.stdout.trimEnd().split('\n');
      const checksum = lines.find((line) => line.startsWith('plant checksum'));
      assert.match(checksum ?? '', /^plant checksum \(sha-256\)\s+([0-9a-f]{64})\s+\1\s+same$/);
      assert.match(
        lines.find((line) => line.startsWith('plants')) ?? '',
        new RegExp(`^plants\\s+${PLANTS}\\s+${PLANTS}\\s+same$`),
      );
      assert.match(lines.find((line) => line.startsWith('tokens')) ?? '', /^tokens\s+3\s+3\s+same$/);
      assert.match(
        lines.find((line) => line.startsWith('webhook recoveries')) ?? '',
        /^webhook recoveries\s+2\s+2\s+same$/,
      );
      assert.match(
        lines.find((line) => line.startsWith('pending deliveries')) ?? '',
        /^pending deliveries\s+(\d+)\s+\1\s+same$/,
      );
      assert.equal(lines.at(-1), 'verified: the target holds what the source held; committed.');
      assert.match(run.stderr, new RegExp(`^copying plants: ${PLANTS} of ${PLANTS} rows in \\d+\\.\\d s`, 'm'));
      assert.match(run.stderr, new RegExp(`^verifying plants: ${PLANTS} of ${PLANTS} rows`, 'm'));

      const again = await runCli(['copy', '--from', sourceUrl, '--to', url], {}, {}, { timeout: 30_000 });
      assert.equal(again.code, 2);
      assert.match(
        again.stderr,
        new RegExp(
          `^plantstore: --to: the target store sqlite:\\S+cli\\.db is not empty \\(plants: ${PLANTS}, tokens: 3, .*pass --replace`,
        ),
      );
    });

    it('refuses a missing source without creating the target', async () => {
      const target = join(dir, 'never.db');
      const run = await runCli(
        ['copy', '--from', `sqlite:${join(dir, 'missing.db')}`, '--to', `sqlite:${target}`],
        {},
        {},
        { timeout: 30_000 },
      );
      assert.equal(run.code, 2);
      assert.equal(
        run.stderr,
        `plantstore: --from: no SQLite store at ${join(dir, 'missing.db')} (a relative path starts from the current folder)\n`,
      );
      assert.equal(existsSync(target), false);
    });

    it('fails cleanly on a target a newer release migrated, or a schema that does not exist, writing nothing', async () => {
      const newer = join(dir, 'newer.db');
      await (await openStore(`sqlite:${newer}`)).close();
      const db = new Database(newer);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, ?, 0)').run('from the future');
      db.close();
      const run = await runCli(['copy', '--from', sourceUrl, '--to', `sqlite:${newer}`], {}, {}, { timeout: 30_000 });
      assert.equal(run.code, 2);
      assert.match(
        run.stderr,
        /^plantstore: the store at \S+newer\.db was migrated by a newer Plant Store \(schema version 99; this build knows up to \d+\)/,
      );
      assert.equal(run.stderr.split('\n').length, 2, 'one line');
      assert.equal(await plantCount(`sqlite:${newer}`), 0);
      await assert.rejects(copyStore(sourceUrl, `sqlite:${newer}`), StoreTooNewError);

      if (!postgres) return;
      const missingSchema = schema.url.replace(/search_path%3D\w+/, 'search_path%3Dplantstore_test_no_such_schema');
      const noSchema = await runCli(['copy', '--from', sourceUrl, '--to', missingSchema], {}, {}, { timeout: 30_000 });
      assert.equal(noSchema.code, 1);
      assert.match(noSchema.stderr, /^plantstore: no schema to create tables in/);
    });
  });
});
