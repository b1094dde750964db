/**
 * The connection pool and the settings every PostgreSQL connection gets.
 *
 * - Bounded: at most `poolSize` connections per pool (an instance has two: requests',
 *   and its create batches', see postgres-store.ts), so N instances use a known
 *   share of the server's max_connections.
 * - Fails fast: `connectTimeoutMs` bounds both opening a connection and waiting for a
 *   free one; `statementTimeoutMs` bounds each statement on the server, and a
 *   slightly longer client-side read timeout catches a server that went silent
 *   (network partition), where the server-side timer cannot help.
 * - int8 is parsed to a JS bigint by this pool's own type parsers (never the
 *   process-wide pg.types, which other code could change), so no id ever passes
 *   through a JS number.
 */
import pg from 'pg';

export interface PostgresConnectionSettings {
  /** postgres://user:password@host:port/database?options=-c%20search_path%3Dmyschema ... */
  readonly url: string;
  readonly poolSize: number;
  readonly statementTimeoutMs: number;
  readonly connectTimeoutMs: number;
  /** How long an unused connection stays open. */
  readonly idleTimeoutMs: number;
}

export const DEFAULT_POSTGRES_SETTINGS = {
  poolSize: 10,
  statementTimeoutMs: 5000,
  connectTimeoutMs: 2000,
  idleTimeoutMs: 30_000,
} as const;

const INT8_OID = 20;

const ignoreReportedElsewhere = (): void => {};

function bigintTypes(): pg.TypeOverrides {
  const types = new pg.TypeOverrides();
  types.setTypeParser(INT8_OID, (text: string) => BigInt(text));
  return types;
}

/**
 * Client settings shared by the pool and the migration connection. Settings given
 * as query parameters of the URL win over these (pg's rule), so an operator can
 * tune one deployment from DATABASE_URL alone.
 */
export function clientConfig(settings: PostgresConnectionSettings): pg.ClientConfig {
  return {
    connectionString: settings.url,
    connectionTimeoutMillis: settings.connectTimeoutMs,
    application_name: 'plantstore',
    types: bigintTypes(),
    // Detects a dead peer on idle connections without waiting for the OS default (2 h).
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
}

/**
 * `lockTimeoutMs`: how long a statement of this pool waits for a lock another
 * transaction holds before it fails with SQLSTATE 55P03 (none by default: until the
 * statement timeout).
 */
export function createPool(
  settings: PostgresConnectionSettings,
  onError: (error: Error) => void,
  lockTimeoutMs?: number,
): pg.Pool {
  const pool = new pg.Pool({
    ...clientConfig(settings),
    ...(lockTimeoutMs === undefined ? {} : { lock_timeout: lockTimeoutMs }),
    max: settings.poolSize,
    idleTimeoutMillis: settings.idleTimeoutMs,
    statement_timeout: settings.statementTimeoutMs,
    // A transaction left open by a bug cannot hold locks for long.
    idle_in_transaction_session_timeout: Math.max(settings.statementTimeoutMs * 2, 10_000),
    query_timeout: settings.statementTimeoutMs + 1000,
  });
  // An idle connection that breaks (server restart, failover, cut network) emits
  // 'error' on the pool; without a listener that would crash the process. The pool
  // has already dropped the connection; the next request opens a new one.
  pool.on('error', onError);
  // A checked-out connection can break between two queries; pg then emits 'error'
  // on the client itself, where the pool has no listener while it is lent out, and
  // an unheard 'error' would crash the process. Nothing more to do here: the next
  // query on that client rejects (and is reported to the caller), and the client is
  // discarded when it is released with that error.
  pool.on('connect', (client) => {
    client.on('error', ignoreReportedElsewhere);
  });
  return pool;
}
