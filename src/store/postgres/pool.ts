/**
 * The connection pool and the settings every PostgreSQL connection gets: bounded (`poolSize` per pool, so N
 * instances use a known share of max_connections); failing fast (`connectTimeoutMs` for connecting and for a
 * free connection, `statementTimeoutMs` on the server, and a slightly longer client read timeout for a server
 * gone silent); int8 parsed to bigint by this pool's own parsers, never the process-wide pg.types.
 * Behind a pooler in transaction mode (`pooler: 'transaction'`) a connection carries no session state: no
 * settings in the start-up packet (PgBouncer refuses them; the role's defaults apply) and no named statements.
 */
import pg from 'pg';
import { UnnamedStatementClient } from './unnamed-statements.js';

/** What DATABASE_URL reaches: PostgreSQL itself (or a session-mode pooler), or a pooler in transaction mode. */
export type PoolerMode = 'none' | 'transaction';

export interface PostgresConnectionSettings {
  /** postgres://user:password@host:port/database?options=-c%20search_path%3Dmyschema ... */
  readonly url: string;
  readonly poolSize: number;
  readonly statementTimeoutMs: number;
  readonly connectTimeoutMs: number;
  /** How long an unused connection stays open. */
  readonly idleTimeoutMs: number;
  readonly pooler: PoolerMode;
  /** Where the change log's LISTEN connection goes (DATABASE_LISTEN_URL): a session; `url` when unset. */
  readonly listenUrl?: string;
}

export const DEFAULT_POSTGRES_SETTINGS = {
  poolSize: 10,
  statementTimeoutMs: 5000,
  connectTimeoutMs: 2000,
  idleTimeoutMs: 30_000,
  pooler: 'none',
} as const;

const INT8_OID = 20;

const ignoreReportedElsewhere = (): void => {};

function bigintTypes(): pg.TypeOverrides {
  const types = new pg.TypeOverrides();
  types.setTypeParser(INT8_OID, (text: string) => BigInt(text));
  return types;
}

/** Client settings of the pool and the migration connection; the URL's query parameters win (pg's rule). */
export function clientConfig(settings: PostgresConnectionSettings, url = settings.url): pg.ClientConfig {
  return {
    connectionString: url,
    connectionTimeoutMillis: settings.connectTimeoutMs,
    application_name: 'plantstore',
    types: bigintTypes(),
    // Detects a dead peer on idle connections without waiting for the OS default (2 h).
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
}

/** A connection of its own (migrations), of the kind the pool would open. */
export function newClient(settings: PostgresConnectionSettings): pg.Client {
  const config = clientConfig(settings);
  return settings.pooler === 'transaction' ? new UnnamedStatementClient(config) : new pg.Client(config);
}

/** Server settings sent in the start-up packet: none through a transaction pooler (the role's defaults apply). */
function sessionSettings(settings: PostgresConnectionSettings, lockTimeoutMs: number | undefined): pg.PoolConfig {
  if (settings.pooler === 'transaction') return {};
  return {
    ...(lockTimeoutMs === undefined ? {} : { lock_timeout: lockTimeoutMs }),
    statement_timeout: settings.statementTimeoutMs,
    // A transaction left open by a bug cannot hold locks for long.
    idle_in_transaction_session_timeout: Math.max(settings.statementTimeoutMs * 2, 10_000),
  };
}

/** `lockTimeoutMs`: how long a statement waits for another transaction's lock before 55P03 (default: no limit; not
 * applied through a transaction pooler). */
export function createPool(
  settings: PostgresConnectionSettings,
  onError: (error: Error) => void,
  lockTimeoutMs?: number,
): pg.Pool {
  const pool = new pg.Pool({
    ...clientConfig(settings),
    ...sessionSettings(settings, lockTimeoutMs),
    ...(settings.pooler === 'transaction' ? { Client: UnnamedStatementClient } : {}),
    max: settings.poolSize,
    idleTimeoutMillis: settings.idleTimeoutMs,
    // The client's own backstop, which needs no server setting.
    query_timeout: settings.statementTimeoutMs + 1000,
  });
  // An idle connection that breaks (server restart, failover, cut network) emits
  // 'error' on the pool; without a listener that would crash the process. The pool
  // has already dropped the connection; the next request opens a new one.
  pool.on('error', onError);
  // A lent-out client that breaks emits 'error' where the pool has no listener, which would crash the process;
  // its next query rejects anyway, and it is discarded when released with that error.
  pool.on('connect', (client) => {
    client.on('error', ignoreReportedElsewhere);
  });
  return pool;
}
