/**
 * The production topology under faults, with the real parts (scripts/ha-lab.sh: Patroni + etcd with a synchronous
 * standby, HAProxy to the primary, PgBouncer in transaction mode, HAProxy in front of two instances). Writers
 * create and update plants through the balancer, a webhook receiver and a change-stream reader follow; then the
 * primary's postmaster is killed (kill -9), a switchover is made, the primary is restarted, and the pooler is
 * stopped for 10 s. After each: every write acknowledged with a 2xx is in the store (a client-side ledger); no
 * request was answered 500, and every 503 had Retry-After; each instance answered a 2xx again by itself within
 * 30 s of the new primary accepting writes; every acknowledged create reached the receiver and the reader (no gap,
 * no reorder); a Last-Event-ID from before the fault resumes; no delivery is left pending in the outbox.
 * The figures (time to each instance's first 2xx, 503s, throughput through the pooler and direct) are printed for
 * bench/README.md.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { chmodSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { openStream, type SseConnection, type SseMessage } from '../events/sse-client.js';
import { fromSource, runCli, startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { tempDir } from '../support/temp.js';

const LAB = fileURLToPath(new URL('../../scripts/ha-lab.sh', import.meta.url));
const PORT_BASE = 27400;
const RECOVERY_BOUND_MS = 30_000;
const run = promisify(execFile);

function labInstalled(): boolean {
  const found = ['patroni', 'etcd', 'haproxy', 'pgbouncer'].every(
    (tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0,
  );
  if (!found && process.env.PLANTSTORE_REQUIRE_POSTGRES === '1')
    throw new Error('patroni, etcd, haproxy or pgbouncer missing and PLANTSTORE_REQUIRE_POSTGRES=1 (see .ci/run)');
  return found;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What one request ended in: a status, or a connection error. */
type Outcome = { status: number; retryAfter: string | null; body: string } | { error: string };

async function send(url: string, token: string, method: string, body?: object): Promise<Outcome> {
  try {
    const response = await fetch(url, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(20_000),
    });
    return { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.text() };
  } catch (error) {
    return { error: String(error) };
  }
}

/** Every answer of a run, and what the client knows is stored. */
class Ledger {
  /** id -> the name of the last acknowledged write, and names sent after it whose outcome is unknown. */
  readonly plants = new Map<bigint, { acked: string; unknown: string[] }>();
  readonly created: bigint[] = [];
  readonly statuses = new Map<string, number>();
  readonly bad: string[] = [];

  record(what: string, outcome: Outcome): boolean {
    const key = 'error' in outcome ? 'connection error' : String(outcome.status);
    this.statuses.set(key, (this.statuses.get(key) ?? 0) + 1);
    if ('error' in outcome) return false;
    if (outcome.status >= 500 && (outcome.status !== 503 || outcome.retryAfter === null))
      this.bad.push(`${what}: ${outcome.status} (Retry-After ${outcome.retryAfter}) ${outcome.body.slice(0, 200)}`);
    return outcome.status >= 200 && outcome.status < 300;
  }
}

const nameOf = (id: bigint, version: number) => `ha-${id}-${version}`;
const idInName = /"name":"ha-(\d+)-0"/;

describe('failover, switchover, restart and a cut of the pooler, under load', { skip: !labInstalled() }, () => {
  const dir = tempDir('plantstore-ha-test-');
  chmodSync(dir, 0o755); // the daemons run as postgres when the tests run as root
  const labEnv = { ...process.env, HA_LAB_DIR: `${dir}/lab`, HA_LAB_PORT: String(PORT_BASE), HA_LAB_INSTANCES: '0' };
  const lab = async (...args: string[]) => (await run(LAB, args, { env: labEnv, timeout: 300_000 })).stdout.trim();
  let env: Record<string, string>;
  const instances: ServiceProcess[] = [];
  let token: string;
  let receiver: Server;
  const received = new Set<bigint>();
  const balancer = `http://127.0.0.1:${PORT_BASE + 60}`;
  let nextId = 1n;
  const figures: Record<string, unknown>[] = [];

  before(async () => {
    await lab('up');
    env = Object.fromEntries((await lab('env')).split('\n').map((line) => line.split('=', 2) as [string, string]));
    const instanceEnv = {
      DATABASE_URL: env.DATABASE_URL!,
      DATABASE_POOLER: 'transaction',
      DATABASE_LISTEN_URL: env.DATABASE_LISTEN_URL!,
      DATABASE_POOL_SIZE: '6',
      HOST: '127.0.0.1',
      RATE_LIMIT: '0',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '200',
      LOG_LEVEL: 'info',
    };
    const port = (i: number) => String(PORT_BASE + 50 + i);
    // The first migrates the empty database; the second finds it done.
    instances.push(await startServiceProcess({ ...instanceEnv, PORT: port(0) }, fromSource()));
    instances.push(await startServiceProcess({ ...instanceEnv, PORT: port(1) }, fromSource()));
    const created = await runCli(
      ['token', 'create', '--name', 'ha', '--scopes', 'plants:read,plants:write,admin'],
      { DATABASE_URL: env.DIRECT_URL! },
      fromSource(),
    );
    assert.equal(created.code, 0, created.stderr);
    token = created.stdout.trim();
    receiver = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += String(chunk)));
      request.on('end', () => {
        const id = idInName.exec(body)?.[1];
        if (id !== undefined) received.add(BigInt(id));
        response.end('ok');
      });
    }).listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    const address = receiver.address();
    assert.ok(address !== null && typeof address === 'object');
    const subscribed = await send(`${balancer}/webhooks`, token, 'POST', {
      url: `http://127.0.0.1:${address.port}/hook`,
    });
    assert.ok('status' in subscribed && subscribed.status === 201, JSON.stringify(subscribed));
    // Both instances in the balancer before the first run.
    for (const instance of instances) assert.equal((await fetch(`${instance.url}/readyz`)).status, 200);
    await sleep(3000);
  });

  after(async () => {
    await Promise.all(instances.map((instance) => instance.stop()));
    receiver?.close();
    await lab('down').catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    if (figures.length > 0) process.stdout.write(`\nha figures: ${JSON.stringify(figures, null, 1)}\n`);
  });

  /** All plants of `ids`, read directly from the primary. */
  async function stored(ids: readonly bigint[]): Promise<Map<bigint, string>> {
    const client = new pg.Client({ connectionString: env.DIRECT_URL, connectionTimeoutMillis: 10_000 });
    await client.connect();
    try {
      const { rows } = await client.query<{ id: string; name: string }>(
        'SELECT id::text, name FROM plants WHERE id = ANY($1::int8[])',
        [ids.map(String)],
      );
      return new Map(rows.map((row) => [BigInt(row.id), row.name]));
    } finally {
      await client.end();
    }
  }

  async function pendingDeliveries(): Promise<number> {
    const client = new pg.Client({ connectionString: env.DIRECT_URL, connectionTimeoutMillis: 10_000 });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending'",
      );
      return rows[0]?.n ?? -1;
    } finally {
      await client.end();
    }
  }

  /** When a write first commits on the primary after `since`. */
  async function primaryWritable(since: number): Promise<number> {
    for (;;) {
      const client = new pg.Client({ connectionString: env.DIRECT_URL, connectionTimeoutMillis: 1000 });
      client.on('error', () => {});
      try {
        await client.connect();
        await client.query('SELECT txid_current()'); // takes a transaction id: a standby refuses
        return Date.now() - since;
      } catch {
        await sleep(100);
      } finally {
        await client.end().catch(() => {});
      }
    }
  }

  /** A change-stream reader through the balancer that resumes with Last-Event-ID whenever its stream ends. */
  function follow(from?: string) {
    const events: SseMessage[] = [];
    let last = from;
    let stopped = false;
    let current: SseConnection | undefined;
    const done = (async () => {
      while (!stopped) {
        try {
          current = await openStream(`${balancer}/events`, token, last === undefined ? {} : { 'last-event-id': last });
          if (current.status !== 200) {
            await current.body().catch(() => '');
            await sleep(500);
            continue;
          }
          let seen = 0;
          const drain = () => {
            for (; seen < current!.messages.length; seen++) {
              const message = current!.messages[seen]!;
              if (message.id !== undefined) last = message.id;
              if (message.event !== undefined) events.push(message);
            }
          };
          const timer = setInterval(drain, 50);
          await current.ended;
          clearInterval(timer);
          drain();
        } catch {
          await sleep(500);
        }
      }
    })();
    return {
      events,
      lastId: () => last,
      async stop() {
        stopped = true;
        current?.close();
        await done;
      },
    };
  }

  async function scenario(name: string, fault: () => Promise<void>, settle?: () => Promise<void>) {
    const ledger = new Ledger();
    const reader = follow();
    // Streaming (its first id-only message came) before the first write.
    await until(() => reader.lastId() !== undefined, 30_000, `${name}: the reader connects`);
    let writing = true;
    const writer = async () => {
      const mine: bigint[] = [];
      for (let round = 0; writing; round++) {
        if (round % 3 === 2 && mine.length > 0) {
          const id = mine[round % mine.length]!;
          const plant = ledger.plants.get(id)!;
          const next = nameOf(id, round);
          plant.unknown.push(next);
          if (ledger.record(`PATCH ${id}`, await send(`${balancer}/plants/${id}`, token, 'PATCH', { name: next })))
            ledger.plants.set(id, { acked: next, unknown: [] });
        } else {
          const id = nextId++;
          const outcome = await send(`${balancer}/plants`, token, 'POST', { id: Number(id), name: nameOf(id, 0) });
          if (ledger.record(`POST ${id}`, outcome)) {
            ledger.plants.set(id, { acked: nameOf(id, 0), unknown: [] });
            ledger.created.push(id);
            mine.push(id);
          }
        }
        await sleep(10);
      }
    };
    const writers = Array.from({ length: 4 }, writer);
    await sleep(3000);
    // A reader's position from before the fault, to resume from afterwards.
    await until(() => reader.events.length > 0, 20_000, `${name}: the reader sees the first creates`);
    const before = reader.events.at(-1)!.id!;
    const t0 = Date.now();
    await fault();
    // Polled beside the instances' probes: when a write first commits on the primary once the fault is done.
    const writable = primaryWritable(t0);
    // Each instance, asked directly, until its first 2xx after the fault.
    const firstOk = await Promise.all(
      instances.map(async (instance) => {
        for (;;) {
          const id = nextId++;
          const outcome = await send(`${instance.url}/plants`, token, 'POST', { id: Number(id), name: nameOf(id, 0) });
          if (ledger.record(`POST ${id} (probe)`, outcome)) {
            ledger.plants.set(id, { acked: nameOf(id, 0), unknown: [] });
            ledger.created.push(id);
            return Date.now() - t0;
          }
          await sleep(100);
        }
      }),
    );
    const writableAfter = await writable;
    await settle?.();
    await sleep(3000);
    writing = false;
    await Promise.all(writers);

    // 0 acknowledged writes lost.
    const ids = [...ledger.plants.keys()];
    const inStore = await stored(ids);
    const lost = ids.filter((id) => {
      const name = inStore.get(id);
      const plant = ledger.plants.get(id)!;
      return name === undefined || (name !== plant.acked && !plant.unknown.includes(name));
    });
    // Every acknowledged create reaches the receiver and the reader; nothing stays pending.
    await until(() => ledger.created.every((id) => received.has(id)), 60_000, `${name}: webhooks delivered`);
    const readIds = () => new Set(reader.events.flatMap((e) => idInName.exec(e.data ?? '')?.[1] ?? []).map(BigInt));
    await until(() => ledger.created.every((id) => readIds().has(id)), 60_000, `${name}: the reader caught up`);
    await until(async () => (await pendingDeliveries()) === 0, 60_000, `${name}: the outbox drained`);
    await reader.stop();
    const positions = reader.events.map((event) => BigInt(event.id!.split('-').at(-1)!));
    const gaps = positions.slice(1).filter((position, i) => position !== positions[i]! + 1n);
    // A Last-Event-ID from before the fault resumes right after it.
    const resumed = await openStream(`${balancer}/events`, token, { 'last-event-id': before });
    assert.equal(resumed.status, 200, await (resumed.status === 200 ? '' : resumed.body()));
    const [first] = await resumed.waitFor(1, (message) => message.event !== undefined, 20_000);
    resumed.close();

    const figure = {
      scenario: name,
      primaryWritableAfterMs: writableAfter,
      instanceFirst2xxAfterFaultMs: firstOk,
      recoveredAfterPrimaryWritableMs: firstOk.map((ms) => Math.max(0, ms - writableAfter)),
      acknowledgedWrites: ids.length,
      lost: lost.length,
      statuses: Object.fromEntries(ledger.statuses),
    };
    figures.push(figure);
    process.stdout.write(`${JSON.stringify(figure)}\n`);
    assert.deepEqual(lost, [], `${name}: acknowledged writes lost`);
    assert.deepEqual(ledger.bad, [], `${name}: answers other than 2xx/4xx/503 with Retry-After`);
    assert.deepEqual(gaps, [], `${name}: the change stream skipped or reordered positions`);
    assert.equal(BigInt(first!.id!.split('-').at(-1)!), BigInt(before.split('-').at(-1)!) + 1n);
    for (const ms of figure.recoveredAfterPrimaryWritableMs)
      assert.ok(ms <= RECOVERY_BOUND_MS, `${name}: an instance took ${ms} ms after the primary accepted writes`);
  }

  it('kill -9 of the primary postmaster: Patroni fails over to the synchronous standby', async () => {
    const was = await lab('primary');
    await scenario('kill -9 primary', async () => {
      await lab('kill-primary');
    });
    assert.notEqual(await lab('primary'), was);
  });

  it('a planned switchover', async () => {
    await lab('wait-sync', '180'); // the old primary rejoined as the synchronous standby
    const was = await lab('primary');
    await scenario('switchover', async () => {
      await lab('switchover');
    });
    assert.notEqual(await lab('primary'), was);
  });

  it("a restart of the primary's PostgreSQL", async () => {
    await lab('wait-sync', '180');
    await scenario('restart', async () => {
      await lab('restart-db');
    });
  });

  it('the pooler stopped for 10 s', async () => {
    await scenario('pooler stopped 10 s', async () => {
      await lab('pooler-stop');
      await sleep(10_000);
      await lab('pooler-start');
    });
  });

  it('figures: create throughput through PgBouncer and direct, same run', async () => {
    const direct = await startServiceProcess(
      {
        DATABASE_URL: env.DIRECT_URL!,
        HOST: '127.0.0.1',
        RATE_LIMIT: '0',
        LOG_LEVEL: 'info',
        DATABASE_POOL_SIZE: '6',
      },
      fromSource(),
    );
    try {
      const rate = async (url: string) => {
        let done = 0;
        const end = Date.now() + 5000;
        await Promise.all(
          Array.from({ length: 16 }, async () => {
            while (Date.now() < end) {
              const id = nextId++;
              const outcome = await send(`${url}/plants`, token, 'POST', { id: Number(id), name: nameOf(id, 0) });
              if ('status' in outcome && outcome.status === 200) done++;
            }
          }),
        );
        return Math.round(done / 5);
      };
      const pooled = await rate(instances[0]!.url);
      const straight = await rate(direct.url);
      const figure = {
        scenario: 'throughput',
        createsPerSecondThroughPgBouncer: pooled,
        createsPerSecondDirect: straight,
      };
      figures.push(figure);
      process.stdout.write(`${JSON.stringify(figure)}\n`);
      assert.ok(pooled > 0 && straight > 0);
    } finally {
      await direct.stop();
    }
  });
});

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(200);
  }
}
