/**
 * The PostgreSQL server the tests use (PLANTSTORE_TEST_DATABASE_URL, by default the
 * local one) and a fresh schema per test store, so concurrent runs and tests never
 * see each other's rows. A schema is selected through the standard `options` URL
 * parameter (`-c search_path=...`), which the service and any child process honour.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { TcpProxy } from './tcp-proxy.js';

export const POSTGRES_TEST_URL = process.env.PLANTSTORE_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

const SCHEMA_PREFIX = 'plantstore_test_';
/** Schemas left behind by runs that were killed are dropped once this old. */
const STALE_SCHEMA_AGE_MS = 24 * 3600 * 1000;
/** How long dropping a stale schema waits for another session's lock before leaving it for a later run. */
const STALE_SCHEMA_LOCK_TIMEOUT = '2s';
/** How long dropping a test's own schema waits for a lock: far above any test's own work, below the suite's file
 * timeout. */
const DROP_LOCK_TIMEOUT = '60s';

/** A URL with its password hidden, for messages. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}

/** Runs `use` with a short-lived connection to the test database. */
export async function withAdminClient<T>(use: (client: pg.Client) => Promise<T>, url = POSTGRES_TEST_URL): Promise<T> {
  // Generous: on a loaded machine a connection can take seconds; a server that is down refuses at once.
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on('error', () => {}); // a broken connection rejects the query in flight
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** The rows of one statement, on a short-lived connection to `url`. */
export async function adminRows<T extends pg.QueryResultRow>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<T[]> {
  return withAdminClient(async (client) => (await client.query<T>(text, values)).rows, url);
}

/** Not a speed target: far above any wait the store bounds (connect timeout, statement timeout + 1 s). */
export const HANG_BOUND_MS = 15_000;

/** `work`, or a rejection naming `what` once it has been pending for HANG_BOUND_MS: a hang fails the test rather than
 * stalling it. */
export async function withinBound<T>(what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still pending after ${HANG_BOUND_MS} ms`)), HANG_BOUND_MS);
  });
  try {
    return await Promise.race([work, hung]);
  } finally {
    clearTimeout(timer);
  }
}

/** How long the reachability probe keeps trying: a busy machine or a server still starting is not an absent one. */
const PROBE_PATIENCE_MS = 30_000;
const PROBE_FIRST_PAUSE_MS = 250;
const PROBE_LONGEST_PAUSE_MS = 4000;

/** Why one attempt to run `SELECT 1` failed, or undefined when it answered. */
async function probeOnce(connectTimeoutMs: number): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: POSTGRES_TEST_URL, connectionTimeoutMillis: connectTimeoutMs });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return (error as Error).message || String(error);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Marks, for the files of this run after the first, that the server never answered: they ask once, not for 30 s each.
 * */
const giveUpMarker = () => join(tmpdir(), `plantstore-pg-unreachable-${process.ppid}`);

/**
 * Undefined when the server answers, else why it does not. It retries with growing
 * pauses for up to PROBE_PATIENCE_MS before deciding, unless an earlier file of the
 * same run already waited that long in vain.
 */
export async function postgresUnreachableReason(patienceMs = PROBE_PATIENCE_MS): Promise<string | undefined> {
  const patient = !existsSync(giveUpMarker());
  const deadline = Date.now() + (patient ? patienceMs : 0);
  let pause = PROBE_FIRST_PAUSE_MS;
  for (let attempt = 1; ; attempt++) {
    const reason = await probeOnce(Math.max(3000, Math.min(10_000, deadline - Date.now())));
    if (reason === undefined) return undefined;
    if (Date.now() + pause > deadline) {
      if (patient) writeFileSync(giveUpMarker(), reason);
      return `${reason}; ${attempt} attempt${attempt === 1 ? '' : 's'}${patient ? ` over ${patienceMs / 1000} s` : ''}`;
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
    pause = Math.min(pause * 2, PROBE_LONGEST_PAUSE_MS);
  }
}

/**
 * Prints the skip notice once per test run, not once per test file: every file runs
 * in its own process, and they share the runner as parent.
 */
export function announceSkipOnce(line: string): void {
  const marker = join(tmpdir(), `plantstore-pg-skip-notice-${process.ppid}`);
  if (existsSync(marker)) return;
  try {
    writeFileSync(marker, line, { flag: 'wx' });
  } catch {
    return; // another file printed it first
  }
  process.stderr.write(`\n${line}\n\n`);
}

/** `base` with `options=-c search_path=<schema>` (added to any options it had). */
export function urlWithSchema(base: string, schema: string): string {
  const url = new URL(base);
  const existing = url.searchParams.get('options');
  url.searchParams.delete('options');
  const options = `${existing === null ? '' : `${existing} `}-c search_path=${schema}`;
  // Built by hand: URLSearchParams writes spaces as '+', which libpq (psql) would not decode.
  const query = url.searchParams.toString();
  url.search = '';
  return `${url.toString()}?${query === '' ? '' : `${query}&`}options=${encodeURIComponent(options)}`;
}

let housekeepingDone = false;

async function dropStaleSchemas(client: pg.Client): Promise<void> {
  if (housekeepingDone) return;
  housekeepingDone = true;
  const { rows } = await client.query<{ nspname: string }>('SELECT nspname FROM pg_namespace WHERE nspname LIKE $1', [
    `${SCHEMA_PREFIX}%`,
  ]);
  // A stale schema may still be in use by a process outside this run (a service left
  // running, an open transaction): its drop must give up, not wait for it forever.
  await client.query(`SET lock_timeout = '${STALE_SCHEMA_LOCK_TIMEOUT}'`);
  for (const { nspname } of rows) {
    const createdAt = Number.parseInt(nspname.slice(SCHEMA_PREFIX.length).split('_')[0] ?? '', 36);
    if (Number.isFinite(createdAt) && Date.now() - createdAt > STALE_SCHEMA_AGE_MS) {
      await client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(nspname)} CASCADE`).catch(() => {});
    }
  }
  await client.query('RESET lock_timeout');
}

export interface TestSchema {
  readonly name: string;
  /** The test database URL selecting this schema. */
  readonly url: string;
  drop(): Promise<void>;
}

/** Creates an empty schema of its own (name: prefix, creation time, pid, random). */
export async function createTestSchema(): Promise<TestSchema> {
  const name = `${SCHEMA_PREFIX}${Date.now().toString(36)}_${process.pid}_${randomBytes(4).toString('hex')}`;
  await withAdminClient(async (client) => {
    await dropStaleSchemas(client);
    await client.query(`CREATE SCHEMA ${pg.escapeIdentifier(name)}`);
  });
  return {
    name,
    url: urlWithSchema(POSTGRES_TEST_URL, name),
    drop: () =>
      withAdminClient(async (client) => {
        // A connection the test left holding a lock would make the drop wait forever: fail instead, naming it.
        await client.query(`SET lock_timeout = '${DROP_LOCK_TIMEOUT}'`);
        await client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(name)} CASCADE`).catch((error: unknown) => {
          throw new Error(`dropping test schema ${name}: ${String(error)}`);
        });
      }),
  };
}

/**
 * Two stores on one fresh schema, as two service instances sharing a database:
 * `store` (pool of 5) is the one under test, `other` the other instance. `close()`
 * closes both and drops the schema.
 */
export async function twoInstancesOnNewSchema(
  otherPoolSize = 5,
): Promise<{ schema: TestSchema; store: PostgresStore; other: PostgresStore; close(): Promise<void> }> {
  const schema = await createTestSchema();
  const store = await PostgresStore.open({ url: schema.url, poolSize: 5 });
  const other = await PostgresStore.open({ url: schema.url, poolSize: otherPoolSize });
  return {
    schema,
    store,
    other,
    async close() {
      await store.close();
      await other.close();
      await schema.drop();
    },
  };
}

/**
 * A breakable TCP proxy in front of the test server, and `url` (a test schema's
 * URL) rewritten to go through it: the outage tests cut, reset or blackhole the
 * proxy while the store is in use.
 */
export async function postgresBehindProxy(url: string): Promise<{ proxy: TcpProxy; url: string }> {
  const target = new URL(POSTGRES_TEST_URL);
  const proxy = await TcpProxy.start(target.hostname, Number(target.port || 5432));
  const proxied = new URL(url);
  proxied.host = `127.0.0.1:${proxy.listeningPort}`;
  return { proxy, url: proxied.toString() };
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

function nodeTypes(node: PlanNode): string[] {
  const index = node['Index Name'] ? ` using ${node['Index Name']}` : '';
  return [
    node['Node Type'] + index + (node['Relation Name'] ? ` on ${node['Relation Name']}` : ''),
    ...(node.Plans ?? []).flatMap(nodeTypes),
  ];
}

/** The plan PostgreSQL would run `text` with, as node types top-down, e.g. "Seq Scan on plants", "Index Scan using
 * plants_pkey on plants". */
export async function planNodeTypes(text: string, values: readonly unknown[], url: string): Promise<string[]> {
  const rows = await withAdminClient(
    async (client) =>
      (await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) ${text}`, [...values])).rows,
    url,
  );
  return nodeTypes(rows[0]!['QUERY PLAN'][0].Plan);
}
