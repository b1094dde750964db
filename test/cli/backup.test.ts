/**
 * `plantstore backup` and `plantstore restore`, run as real processes next to the real
 * service process:
 * - a backup taken while the service takes writes restores to a consistent store,
 *   holding everything acknowledged before it began;
 * - restore refuses a store that a running service has open, even an idle one, and
 *   changes nothing; it works once the service has stopped or was killed (and then the
 *   killed service's WAL is not replayed into the restored store);
 * - the other refusals leave every file as it was.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { registerFindFunctions } from '../../src/store/sqlite/find-functions.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { Errors } from '../../src/http/errors.js';
import { issueToken } from '../../src/tokens/token-service.js';
import { openStream } from '../events/sse-client.js';
import { runCli, startServiceProcess } from '../support/service-process.js';
import { tempDir } from '../support/temp.js';
import { WAIT_BOUND_MS, waitFor } from '../support/wait.js';
import { checkedFetch } from '../support/checked-fetch.js';

/** Plants 1..SEEDED exist before the load; the load renames them and deletes those above SEEDED / 2. */
const SEEDED = 20_000;
/** The load creates plants from this id up. */
const FIRST_CREATED = 1_000_000;
const WORKERS = 8;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const seededName = (id: number) => `Seeded fern ${id} ✿`;

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function scratch(): string {
  const dir = tempDir('plantstore-backup-');
  dirs.push(dir);
  return dir;
}

/** Not a speed target: a bound for a hang, far above what a backup or restore takes on a busy machine. */
const cli = (args: string[]) => runCli(args, {}, {}, { timeout: 180_000 });

/** Creates a store at path with plants 1..seed; returns a token that may read and write plants. */
async function newStore(path: string, seed: number): Promise<string> {
  const store = SqliteStore.open({ path });
  try {
    const { secret } = await issueToken(store.tokens, { name: 'tests', scopes: ['plants:read', 'plants:write'] });
    for (let first = 1; first <= seed; first += 1000) {
      const ids = Array.from({ length: Math.min(1000, seed - first + 1) }, (_, i) => first + i);
      await Promise.all(
        ids.map((id) => store.plants.createPlant({ id: BigInt(id), name: seededName(id), tag: `seed-${id % 7}` })),
      );
    }
    return secret;
  } finally {
    await store.close();
  }
}

async function call(url: string, token: string, method: string, path: string, body?: unknown): Promise<number> {
  const response = await checkedFetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  await response.arrayBuffer();
  return response.status;
}

interface Load {
  /** Ids of created plants, in the order their 200 arrived. */
  readonly created: string[];
  /** Every name a plant was given (seeded, created or renamed to), by id. */
  readonly names: Map<string, Set<string>>;
  /** Answers no client should get. */
  readonly unexpected: string[];
  stop(): Promise<void>;
}

/** WORKERS clients creating plants, renaming and deleting seeded ones, until stopped. */
function startLoad(url: string, token: string): Load {
  const created: string[] = [];
  const names = new Map<string, Set<string>>();
  for (let id = 1; id <= SEEDED; id++) names.set(String(id), new Set([seededName(id)]));
  const unexpected: string[] = [];
  const named = (id: string, name: string) => names.set(id, (names.get(id) ?? new Set()).add(name));
  let nextId = FIRST_CREATED;
  let stopped = false;
  const worker = async (w: number) => {
    for (let n = 1; !stopped; n++) {
      const seeded = 1 + Math.floor(Math.random() * SEEDED);
      if (n % 4 === 0) {
        const name = `Renamed ${seeded} by ${w}.${n}`;
        named(String(seeded), name);
        const status = await call(url, token, 'PATCH', `/plants/${seeded}`, { name });
        if (status !== 200 && status !== 404) unexpected.push(`PATCH ${seeded}: ${status}`);
      } else if (n % 9 === 0 && seeded > SEEDED / 2) {
        const status = await call(url, token, 'DELETE', `/plants/${seeded}`);
        if (status !== 204 && status !== 404) unexpected.push(`DELETE ${seeded}: ${status}`);
      } else {
        const id = String(nextId++);
        const name = `Created ${id} ✓`;
        named(id, name);
        const status = await call(url, token, 'POST', '/plants', { id: Number(id), name, tag: `load-${w}` });
        if (status === 200) created.push(id);
        else unexpected.push(`POST ${id}: ${status}`);
      }
    }
  };
  const done = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
  return {
    created,
    names,
    unexpected,
    async stop() {
      stopped = true;
      await done;
    },
  };
}

/** Left-over temporary files of a backup or restore in a folder. */
const partials = (dir: string) => readdirSync(dir).filter((name) => name.includes('.partial'));

function plantIds(path: string): string[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare('SELECT CAST(id AS TEXT) FROM plants ORDER BY id').pluck().all() as string[];
  } finally {
    db.close();
  }
}

/** Waits for the store's start-up integrity check (readiness), as /readyz would. */
async function ready(store: SqliteStore): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await store.ping();
    } catch (error) {
      if (attempt * 100 >= WAIT_BOUND_MS) throw error;
      await sleep(100);
    }
  }
}

describe('plantstore backup and restore (SQLite)', () => {
  it('a backup taken under write load restores to a consistent store', { timeout: 600_000 }, async (t) => {
    const dir = scratch();
    const live = join(dir, 'live.db');
    const token = await newStore(live, SEEDED);
    const service = await startServiceProcess({ DATABASE_URL: `sqlite:${live}` });
    const load = startLoad(service.url, token);
    let before: Set<string>;
    let during: number;
    try {
      await waitFor('the load has creates acknowledged', () => load.created.length >= 10);
      before = new Set(load.created);
      const backup = await cli(['backup', join(dir, 'backup.db'), '--database-url', `sqlite:${live}`]);
      during = load.created.length - before.size;
      assert.equal(backup.code, 0, backup.stderr);
      assert.match(
        backup.stderr,
        /^backed up .*live\.db to .*backup\.db: \d+ plants, schema version \d+, \d+ pages \([\d.]+ MiB\), in [\d.]+ s\n$/,
      );
      // Creates acknowledged after the backup returned: the backup must not have them. Each worker may have had one
      // create committed before the backup's snapshot and answered after it returned; the next one was committed after.
      const atReturn = load.created.length;
      await waitFor('creates acknowledged after the backup', () => load.created.length > atReturn + WORKERS);
    } finally {
      await load.stop();
      await service.stop();
    }
    assert.deepEqual(load.unexpected, []);
    assert.ok(
      before.size > 0 && during > 0,
      `the service took writes before (${before.size}) and while (${during}) the backup ran`,
    );

    const restored = join(dir, 'restored', 'plantstore.db');
    const restore = await cli(['restore', join(dir, 'backup.db'), '--database-url', `sqlite:${restored}`]);
    assert.equal(restore.code, 0, restore.stderr);
    assert.match(restore.stderr, /^restored .*plantstore\.db from .*backup\.db: \d+ plants/);

    const db = new Database(restored);
    let rows: { id: string; name: string }[];
    let newestVersion: number;
    try {
      registerFindFunctions(db);
      assert.deepEqual(db.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
      // FTS5 checks its index, and with rank 1 that it matches the plants table too; it throws if not.
      db.prepare("INSERT INTO plants_search (plants_search, rank) VALUES ('integrity-check', 1)").run();
      const staleFindColumns = db
        .prepare(
          'SELECT count(*) FROM plants WHERE name_key IS NOT plant_name_key(name) OR name_words IS NOT plant_search_words(name) OR tag_words IS NOT plant_search_words(tag)',
        )
        .pluck()
        .get();
      assert.equal(staleFindColumns, 0);
      const versions = db
        .prepare('SELECT (SELECT last FROM plant_version_counter) AS last, (SELECT max(version) FROM plants) AS newest')
        .get() as { last: number; newest: number };
      assert.ok(
        versions.last >= versions.newest,
        `version counter ${versions.last} is behind a plant's version ${versions.newest}`,
      );
      newestVersion = versions.newest;
      rows = db.prepare('SELECT CAST(id AS TEXT) AS id, name FROM plants').all() as { id: string; name: string }[];
    } finally {
      db.close();
    }

    const byId = new Map(rows.map((row) => [row.id, row.name]));
    const problems: string[] = [];
    for (const id of before)
      if (!byId.has(id)) problems.push(`plant ${id}, acknowledged before the backup began, is missing`);
    for (let id = 1; id <= SEEDED / 2; id++)
      if (!byId.has(String(id))) problems.push(`seeded plant ${id} (never deleted) is missing`);
    for (const [id, name] of byId)
      if (load.names.get(id)?.has(name) !== true)
        problems.push(`plant ${id} is named ${JSON.stringify(name)}, which no client sent`);
    assert.deepEqual(problems, []);
    const createdInBackup = rows.filter((row) => Number(row.id) >= FIRST_CREATED).length;
    assert.ok(createdInBackup < load.created.length, 'the backup is the store at one moment, not at its end');

    const store = SqliteStore.open({ path: restored });
    try {
      await ready(store);
      const last = [...before].at(-1) ?? '';
      assert.equal((await store.plants.getPlant(BigInt(last)))?.name, byId.get(last));
      const outcome = await store.plants.createPlant({ id: BigInt(FIRST_CREATED - 1), name: 'After the restore' });
      assert.equal(outcome.kind, 'created');
      assert.ok(outcome.plant.version > BigInt(newestVersion), 'versions go on from the restored counter');
    } finally {
      await store.close();
    }
    t.diagnostic(
      `${SEEDED} plants seeded; ${before.size} creates acknowledged before the backup, ${during} while it ran, ` +
        `${load.created.length} in all; the backup holds ${rows.length} plants (${createdInBackup} created by the load)`,
    );
  });

  it(
    'restore refuses a store an idle running service has open, and replaces it once the service stopped or was killed',
    { timeout: 300_000 },
    async () => {
      const dir = scratch();
      const live = join(dir, 'live.db');
      const url = `sqlite:${live}`;
      const backupFile = join(dir, 'backup.db');
      const token = await newStore(live, 3);
      let service = await startServiceProcess({ DATABASE_URL: url });
      assert.equal(await call(service.url, token, 'POST', '/plants', { id: 4, name: 'In the backup' }), 200);
      assert.equal((await cli(['backup', backupFile, '--database-url', url])).code, 0);
      assert.equal(await call(service.url, token, 'POST', '/plants', { id: 5, name: 'After the backup' }), 200);
      await sleep(200);

      const inode = statSync(live).ino;
      const refused = await cli(['restore', backupFile, '--force', '--database-url', url]);
      assert.equal(refused.code, 1);
      assert.match(
        refused.stderr,
        /^plantstore: .*live\.db is open in another process \(a running plantstore serve\?\): stop it first; a store in use is never replaced\n$/,
      );
      const withoutForce = await cli(['restore', backupFile, '--database-url', url]);
      assert.equal(withoutForce.code, 1);
      assert.match(withoutForce.stderr, /live\.db exists: pass --force to replace it/);
      assert.equal(statSync(live).ino, inode, 'the store file is the same');
      assert.equal(
        await call(service.url, token, 'GET', '/plants/5'),
        200,
        'the service still has what was written after the backup',
      );
      assert.deepEqual(partials(dir), []);

      assert.equal(await service.stop(), 0);
      const afterStop = await cli(['restore', backupFile, '--force', '--database-url', url]);
      assert.equal(afterStop.code, 0, afterStop.stderr);
      assert.match(afterStop.stderr, /, replacing the store that was there: 4 plants,/);
      assert.deepEqual(plantIds(live), ['1', '2', '3', '4']);

      service = await startServiceProcess({ DATABASE_URL: url });
      assert.equal(
        await call(service.url, token, 'GET', '/plants/4'),
        200,
        'the restored store serves, with its tokens',
      );
      assert.equal(await call(service.url, token, 'GET', '/plants/5'), 404);
      assert.equal(await call(service.url, token, 'POST', '/plants', { id: 6, name: 'Before the kill' }), 200);
      assert.equal(await service.stop('SIGKILL'), 'SIGKILL');
      assert.ok(existsSync(`${live}-wal`), 'the killed service left its WAL behind');

      const afterKill = await cli(['restore', backupFile, '--force', '--database-url', url]);
      assert.equal(afterKill.code, 0, afterKill.stderr);
      assert.equal(
        existsSync(`${live}-wal`),
        false,
        'no WAL of the old store is left to be replayed into the restored one',
      );
      const store = SqliteStore.open({ path: live });
      try {
        await ready(store);
        assert.equal((await store.plants.getPlant(4n))?.name, 'In the backup');
        assert.equal(await store.plants.getPlant(6n), undefined);
      } finally {
        await store.close();
      }
      assert.deepEqual(plantIds(live), ['1', '2', '3', '4']);
      assert.deepEqual(partials(dir), []);
    },
  );

  it(
    'a restored store starts a new history of stream positions: a client resuming from the one it replaced is refused, not resumed',
    { timeout: 300_000 },
    async () => {
      const dir = scratch();
      const live = join(dir, 'live.db');
      const url = `sqlite:${live}`;
      const backupFile = join(dir, 'backup.db');
      const token = await newStore(live, 0);
      let service = await startServiceProcess({ DATABASE_URL: url });
      const create = async (from: number, to: number) => {
        for (let id = from; id <= to; id++)
          assert.equal(await call(service.url, token, 'POST', '/plants', { id, name: `plant ${id}` }), 200);
      };
      await create(1, 10);
      assert.equal((await cli(['backup', backupFile, '--database-url', url])).code, 0);
      await create(11, 15);
      // A client has seen every change up to position 15.
      const reader = await openStream(`${service.url}/events?after=0`, token);
      const seen = (await reader.waitFor(15, (m) => m.event === 'plant.created')).at(-1)?.id ?? '';
      reader.close();
      assert.match(seen, /^[0-9a-f]{16}-15$/);
      assert.equal(await service.stop(), 0);

      assert.equal((await cli(['restore', backupFile, '--force', '--database-url', url])).code, 0);
      service = await startServiceProcess({ DATABASE_URL: url });
      try {
        await create(101, 110); // positions 11 to 20 of the restored history
        const resumed = await openStream(`${service.url}/events`, token, { 'last-event-id': seen });
        assert.equal(resumed.status, 410);
        const record = JSON.parse(await resumed.body()) as { error: number; message: string };
        assert.equal(record.error, Errors.EVENTS_HISTORY_CHANGED.code);
        assert.match(record.message, /belongs to another history of this store .*restored from a backup/);
        // Read afresh: the restored history's own ids resume.
        const fresh = await openStream(`${service.url}/events?after=0`, token);
        const ids = (await fresh.waitFor(20, (m) => m.event === 'plant.created')).map((m) => m.id ?? '');
        fresh.close();
        assert.notEqual(ids[0]?.split('-')[0], seen.split('-')[0]);
        const next = await openStream(`${service.url}/events`, token, { 'last-event-id': ids[9] ?? '' });
        assert.deepEqual(
          (await next.waitFor(5, (m) => m.event === 'plant.created')).slice(0, 5).map((m) => m.data),
          [101, 102, 103, 104, 105].map((id) => `{"id":${id},"name":"plant ${id}"}`),
        );
        next.close();
      } finally {
        await service.stop();
      }
    },
  );

  it(
    'refuses an existing backup file without --force, files that are not Plant Store backups, and PostgreSQL',
    { timeout: 300_000 },
    async () => {
      const dir = scratch();
      const live = join(dir, 'live.db');
      const url = `sqlite:${live}`;
      await newStore(live, 2);

      const file = join(dir, 'backup.db');
      writeFileSync(file, 'keep me\n');
      const exists = await cli(['backup', file, '--database-url', url]);
      assert.equal(exists.code, 1);
      assert.match(exists.stderr, /^plantstore: .*backup\.db exists: pass --force to replace it/);
      const notADatabase = await cli(['backup', file, '--force', '--database-url', url]);
      assert.equal(notADatabase.code, 1);
      assert.match(notADatabase.stderr, /backup\.db exists and is not a SQLite database: not replacing it/);
      assert.equal(readFileSync(file, 'utf8'), 'keep me\n');
      rmSync(file);
      const made = await cli(['backup', file, '--database-url', url]);
      assert.equal(made.code, 0, made.stderr);
      assert.match(made.stderr, /: 2 plants, schema version \d+,/);
      const replaced = await cli(['backup', file, '--force', '--database-url', url]);
      assert.equal(replaced.code, 0, replaced.stderr);
      assert.match(replaced.stderr, /\(replacing the file that was there\): 2 plants/);
      const missing = await cli([
        'backup',
        join(dir, 'other.db'),
        '--database-url',
        `sqlite:${join(dir, 'missing.db')}`,
      ]);
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /no SQLite store at .*missing\.db/);

      const notes = join(dir, 'notes.txt');
      writeFileSync(notes, 'these are notes, not a database\n'.repeat(40));
      const foreign = join(dir, 'foreign.db');
      const foreignDb = new Database(foreign);
      foreignDb.exec('CREATE TABLE plants (id INTEGER PRIMARY KEY)');
      foreignDb.close();
      const newer = join(dir, 'newer.db');
      copyFileSync(file, newer);
      const newerDb = new Database(newer);
      newerDb
        .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, ?, 0)')
        .run('from a later release');
      newerDb.close();
      const target = join(dir, 'restored', 'plantstore.db');
      for (const [backup, message] of [
        [notes, /^plantstore: the backup .*notes\.txt is not a SQLite database\n$/],
        [foreign, /^plantstore: the backup .*foreign\.db is a SQLite database but not a Plant Store/],
        [
          newer,
          /^plantstore: the store in the backup .*newer\.db was migrated by a newer Plant Store \(schema version 9999;/,
        ],
      ] as const) {
        const run = await cli(['restore', backup, '--database-url', `sqlite:${target}`]);
        assert.equal(run.code, 1, run.stderr);
        assert.match(run.stderr, message);
      }
      assert.equal(existsSync(join(dir, 'restored')), false, 'nothing was written');
      assert.deepEqual(partials(dir), []);

      for (const [command, tool] of [
        ['backup', 'pg_dump'],
        ['restore', 'pg_restore'],
      ] as const) {
        const run = await cli([command, file, '--database-url', 'postgres://plantstore@127.0.0.1:5432/plantstore']);
        assert.equal(run.code, 2);
        assert.equal(
          run.stderr,
          `plantstore: plantstore ${command} copies SQLite stores; on PostgreSQL use ${tool} (docs/postgresql.md, "Backing up and restoring")\n`,
        );
      }

      const help = await cli(['--help']);
      assert.match(help.stdout, /plantstore backup \[options\] <file>/);
      assert.match(help.stdout, /plantstore restore \[options\] <file>/);
    },
  );
});
