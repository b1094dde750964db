/**
 * A real PgBouncer (Debian's `pgbouncer`) in transaction pooling mode in front of the test server, for one test
 * schema: PgBouncer passes no `options` start-up parameter, so the schema is selected by the pooler's own
 * connect_query on each server connection it opens. As root it runs as `postgres` (PgBouncer refuses root).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { after } from 'node:test';
import { freePort } from './free-port.js';
import { POSTGRES_TEST_URL } from './postgres.js';
import { tempDir } from './temp.js';

const PGBOUNCER = '/usr/sbin/pgbouncer';

/** True when PgBouncer is installed (.ci/run installs it; PLANTSTORE_REQUIRE_POSTGRES=1 makes its absence fail). */
export function pgbouncerInstalled(): boolean {
  const found = spawnSync(PGBOUNCER, ['--version']).status === 0;
  if (!found && process.env.PLANTSTORE_REQUIRE_POSTGRES === '1')
    throw new Error(`${PGBOUNCER} is missing and PLANTSTORE_REQUIRE_POSTGRES=1: apt-get install pgbouncer`);
  return found;
}

async function accepting(port: number): Promise<boolean> {
  const socket = new Socket();
  try {
    socket.connect(port, '127.0.0.1');
    await Promise.race([once(socket, 'connect'), once(socket, 'error').then(([error]) => Promise.reject(error))]);
    return true;
  } catch {
    return false;
  } finally {
    socket.destroy();
  }
}

const running = new Set<ChildProcess>();
after(() => {
  for (const child of running) child.kill('SIGKILL');
});

export interface PgBouncer {
  /** The pooler's URL for the schema (no `options`: PgBouncer refuses them). */
  readonly url: string;
  stop(): Promise<void>;
}

/** PgBouncer in transaction mode for `schema` of the test database. */
export async function startPgBouncer(schema: string): Promise<PgBouncer> {
  const target = new URL(POSTGRES_TEST_URL);
  const dir = tempDir('plantstore-pgbouncer-');
  chmodSync(dir, 0o755);
  const port = await freePort();
  const user = decodeURIComponent(target.username || 'postgres');
  const database = target.pathname.slice(1) || 'postgres';
  writeFileSync(join(dir, 'userlist.txt'), `"${user}" "${decodeURIComponent(target.password)}"\n`);
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `pooled = host=${target.hostname} port=${target.port || 5432} dbname=${database} user=${user}` +
        `${target.password === '' ? '' : ` password=${decodeURIComponent(target.password)}`}` +
        ` connect_query='SET search_path TO ${schema}'`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      'pool_mode = transaction',
      'default_pool_size = 20',
      'max_client_conn = 500',
      'server_login_retry = 1',
      '',
    ].join('\n'),
  );
  const asPostgres = process.getuid?.() === 0 ? { uid: uidOf('postgres'), gid: gidOf('postgres') } : {};
  const child = spawn(PGBOUNCER, [join(dir, 'pgbouncer.ini')], { ...asPostgres, stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  child.stderr.on('data', (chunk) => (output += String(chunk)));
  running.add(child);
  const exited = once(child, 'exit');
  for (let waited = 0; !(await accepting(port)); waited += 50) {
    if (child.exitCode !== null || waited > 10_000) throw new Error(`PgBouncer did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/pooled`,
    async stop() {
      running.delete(child);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGINT'); // PgBouncer's immediate shutdown
        await exited;
      }
    },
  };
}

function idOf(flag: '-u' | '-g', name: string): number {
  return Number(spawnSync('id', [flag, name], { encoding: 'utf8' }).stdout.trim());
}
const uidOf = (name: string) => idOf('-u', name);
const gidOf = (name: string) => idOf('-g', name);
