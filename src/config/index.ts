/**
 * Configuration: environment variables, overridden by flags, checked once at start-up, so a
 * bad value stops the process with a message naming the variable.
 */
import { availableParallelism } from 'node:os';
import { host, WILDCARD_HOSTS } from './addresses.js';
import { databaseListenUrl, databaseUrl } from './database-url.js';
import { boolean, ConfigError, integer, oneOf, type Source } from './errors.js';
import { publicUrl } from './public-url.js';
import {
  DEFAULT_DISABLE_AFTER,
  DEFAULT_RETRY_SCHEDULE,
  parseDisableAfter,
  parseRetrySchedule,
  RetryScheduleError,
} from './retry-schedule.js';
import { loadServiceLimits, type ServiceLimits } from './service-limits.js';

export { ConfigError } from './errors.js';

export interface Config {
  readonly host: string;
  readonly port: number;
  /** Processes serving HTTP on the one port (1: one process, as before; docs/deploying.md, "Workers: every core"). */
  readonly workers: number;
  /** The URL clients reach the service at (PUBLIC_URL), behind a proxy; unset: each request's own origin. */
  readonly publicUrl: string | undefined;
  /** `sqlite:<path>` (default, embedded) or `postgres://...` (shared). */
  readonly databaseUrl: string;
  readonly logLevel: string;
  /** Largest request body accepted, in bytes (413 above). */
  readonly bodyLimitBytes: number;
  /** The largest body of POST /plants/import (which streams it: BODY_LIMIT is for bodies read whole). */
  readonly importLimitBytes: number;
  /** The least rate, in bytes a second, an import's body must keep to (it is not bound by REQUEST_TIMEOUT_MS). */
  readonly importMinBytesPerSecond: number;
  /** An export's snapshot holds back WAL checkpoints and vacuum, at the client's pace: this bounds it. */
  readonly exportTimeoutMs: number;
  /** Imports and exports one token may run at once on an instance (429 beyond), so one client cannot hold every slot
   * the store has. */
  readonly bulkMaxPerToken: number;
  /** How long a token lookup is cached: the bound on how late a revocation takes effect. */
  readonly tokenCacheTtlMs: number;
  /** How long SIGTERM waits for in-flight requests before closing anyway. */
  readonly shutdownTimeoutMs: number;
  /** `pretty` (pino-pretty), `json`, or `auto`: pretty when stdout is a terminal. */
  readonly logFormat: LogFormat;
  /**
   * Who may read GET /metrics: `admin` (a token with the metrics:read or the admin scope) or `none` (anyone who can
   * reach it).
   */
  readonly metricsAuth: MetricsAuth;
  /** When set, /metrics is served only on this port (on metricsHost), not beside the API. */
  readonly metricsPort: number | undefined;
  readonly metricsHost: string;
  /** PostgreSQL only: most connections one process opens (N instances open up to N times this). */
  readonly databasePoolSize: number;
  /** PostgreSQL only: longest a statement may run before the server cancels it (the request then gets 503). */
  readonly databaseStatementTimeoutMs: number;
  /** PostgreSQL only: longest a request waits to open or borrow a connection before failing with 503. */
  readonly databaseConnectTimeoutMs: number;
  /** PostgreSQL only: `transaction` when DATABASE_URL reaches a pooler in transaction mode (PgBouncer). */
  readonly databasePooler: 'none' | 'transaction';
  /** PostgreSQL only: a direct connection for the change stream's LISTEN (needed behind a transaction pooler). */
  readonly databaseListenUrl: string | undefined;
  /** SQLite only: reader threads, each with a read-only connection (by default the cores Node may use). */
  readonly sqliteReaders: number;
  /** SQLite only: longest one read (a page, a count) may run before it is stopped (the request then gets 503). */
  readonly readTimeLimitMs: number;
  /** Webhooks may target loopback, private and link-local addresses (development and tests only). */
  readonly webhookAllowPrivateUrls: boolean;
  /** Delays before each webhook retry, in ms; the first attempt is immediate. */
  readonly webhookRetrySchedule: readonly number[];
  /** How long a webhook subscriber has to answer one attempt. */
  readonly webhookTimeoutMs: number;
  /** Most webhook requests in flight at once, per process. */
  readonly webhookConcurrency: number;
  /** How often the outbox is polled for due deliveries (retries, and events other instances wrote). */
  readonly webhookPollIntervalMs: number;
  /** Finished webhook events (with their deliveries and attempts) are deleted this many days after they were created; 0
   * keeps them forever. */
  readonly webhookRetentionDays: number;
  /** A subscription whose attempts have all failed for this long is disabled; `never` (0) disables none. */
  readonly webhookDisableAfterMs: number;
  /** The live change stream (GET /events): see docs/events.md. */
  readonly events: EventStreamSettings;
  /** PATCH, PUT and DELETE of a plant must carry If-Match (428 without): no change can be made blind. */
  readonly requirePreconditions: boolean;
  /** Rate limits, timeouts, header size, CORS and HSTS (service-limits.ts, docs/security.md). */
  readonly limits: ServiceLimits;
}

export interface EventStreamSettings {
  /** How long the change log keeps a change: a stream can resume from a position this recent. */
  readonly retentionHours: number;
  /** A comment line this often on a quiet stream, so proxies keep it open. */
  readonly heartbeatMs: number;
  /** Open streams one token may hold at once (429 beyond). */
  readonly maxStreamsPerToken: number;
  /** Bytes a stream may have waiting for its reader; beyond, it reads the log at the reader's pace, not live batches.
   * */
  readonly maxBacklogBytes: number;
  /** How long a ticket from POST /events/tickets may wait to open its stream. */
  readonly ticketTtlMs: number;
  /** How long a stream's reader may take nothing of what waits for it before the stream is cut off (it can resume). */
  readonly stallMs: number;
}

export type LogFormat = 'auto' | 'json' | 'pretty';
export type MetricsAuth = 'admin' | 'none';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function retrySchedule(source: Source): number[] {
  const raw = source.WEBHOOK_RETRY_SCHEDULE || DEFAULT_RETRY_SCHEDULE;
  try {
    return parseRetrySchedule(raw);
  } catch (error) {
    if (error instanceof RetryScheduleError)
      throw new ConfigError(`WEBHOOK_RETRY_SCHEDULE: ${error.message} (got '${raw}')`);
    throw error;
  }
}

function disableAfter(source: Source): number {
  const raw = source.WEBHOOK_DISABLE_AFTER || DEFAULT_DISABLE_AFTER;
  try {
    return parseDisableAfter(raw);
  } catch (error) {
    if (error instanceof RetryScheduleError) throw new ConfigError(`WEBHOOK_DISABLE_AFTER: ${error.message}`);
    throw error;
  }
}

/** METRICS_PORT, unless it is the API's own port on an address the API listens on too. */
function metricsPort(source: Source, port: number, apiHost: string, metricsHost: string): number | undefined {
  if (!source.METRICS_PORT) return undefined;
  const metrics = integer(source, 'METRICS_PORT', 0, 0, 65535);
  const shared = apiHost === metricsHost || WILDCARD_HOSTS.includes(apiHost) || WILDCARD_HOSTS.includes(metricsHost);
  if (metrics !== 0 && metrics === port && shared) {
    throw new ConfigError(
      `METRICS_PORT (${metrics}) must differ from PORT (${port}): it gives /metrics a listener of its own; unset it to serve /metrics beside the API`,
    );
  }
  return metrics;
}

function logLevel(source: Source): string {
  const level = source.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(level))
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got '${level}')`);
  return level;
}

/** One per core, as better-sqlite3 advises, but at most 8: each holds its own heap and page cache. */
export function defaultSqliteReaders(): number {
  return Math.min(availableParallelism(), 8);
}

/** `overrides` (from flags) are keyed by the variables' names, so a flag and its variable cannot disagree. */
export function loadConfig(env: Source = process.env, overrides: Source = {}): Config {
  const source: Source = {
    ...env,
    ...Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined)),
  };
  const apiHost = host(source, 'HOST', '127.0.0.1');
  const port = integer(source, 'PORT', 8080, 0, 65535);
  const metricsHost = host(source, 'METRICS_HOST', '127.0.0.1');
  return {
    host: apiHost,
    port,
    workers: integer(source, 'WORKERS', 1, 1, 256),
    publicUrl: publicUrl(source),
    databaseUrl: databaseUrl(source),
    logLevel: logLevel(source),
    bodyLimitBytes: integer(source, 'BODY_LIMIT', 64 * 1024, 1024, 64 * 1024 * 1024),
    importLimitBytes: integer(source, 'IMPORT_LIMIT', 1024 * 1024 * 1024, 1024, 2 ** 40),
    importMinBytesPerSecond: integer(source, 'IMPORT_MIN_RATE', 64 * 1024, 1, 1024 * 1024 * 1024),
    exportTimeoutMs: integer(source, 'EXPORT_TIMEOUT_MS', 3_600_000, 1000, 86_400_000),
    bulkMaxPerToken: integer(source, 'BULK_MAX_PER_TOKEN', 2, 1, 1000),
    tokenCacheTtlMs: integer(source, 'TOKEN_CACHE_TTL_MS', 2000, 0, 60_000),
    shutdownTimeoutMs: integer(source, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    logFormat: oneOf(source, 'LOG_FORMAT', ['auto', 'json', 'pretty'], 'auto'),
    metricsAuth: oneOf(source, 'METRICS_AUTH', ['admin', 'none'], 'admin'),
    metricsPort: metricsPort(source, port, apiHost, metricsHost),
    metricsHost,
    databasePoolSize: integer(source, 'DATABASE_POOL_SIZE', 10, 1, 1000),
    databaseStatementTimeoutMs: integer(source, 'DATABASE_STATEMENT_TIMEOUT_MS', 5000, 100, 600_000),
    databaseConnectTimeoutMs: integer(source, 'DATABASE_CONNECT_TIMEOUT_MS', 2000, 100, 60_000),
    databasePooler: oneOf(source, 'DATABASE_POOLER', ['none', 'transaction'], 'none'),
    databaseListenUrl: databaseListenUrl(source),
    sqliteReaders: integer(source, 'SQLITE_READERS', defaultSqliteReaders(), 1, 256),
    readTimeLimitMs: integer(source, 'READ_TIME_LIMIT_MS', 5000, 1, 600_000),
    webhookAllowPrivateUrls: boolean(source, 'WEBHOOK_ALLOW_PRIVATE_URLS', false),
    requirePreconditions: boolean(source, 'REQUIRE_PRECONDITIONS', false),
    webhookRetrySchedule: retrySchedule(source),
    webhookTimeoutMs: integer(source, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
    webhookConcurrency: integer(source, 'WEBHOOK_CONCURRENCY', 8, 1, 1000),
    webhookPollIntervalMs: integer(source, 'WEBHOOK_POLL_INTERVAL_MS', 1000, 10, 600_000),
    webhookRetentionDays: integer(source, 'WEBHOOK_RETENTION_DAYS', 30, 0, 36_500),
    webhookDisableAfterMs: disableAfter(source),
    events: {
      retentionHours: integer(source, 'EVENTS_RETENTION_HOURS', 24, 1, 24 * 365),
      heartbeatMs: integer(source, 'EVENTS_HEARTBEAT_MS', 15_000, 100, 300_000),
      maxStreamsPerToken: integer(source, 'EVENTS_MAX_STREAMS_PER_TOKEN', 20, 1, 100_000),
      maxBacklogBytes: integer(source, 'EVENTS_MAX_BACKLOG_BYTES', 1024 * 1024, 1024, 1024 * 1024 * 1024),
      stallMs: integer(source, 'EVENTS_STALL_MS', 30_000, 100, 3_600_000),
      ticketTtlMs: integer(source, 'EVENTS_TICKET_TTL_MS', 30_000, 1000, 600_000),
    },
    limits: loadServiceLimits(source),
  };
}
