/** The limits a public service needs; each, with its default and what a client meets, is in docs/security.md. */
import { isAddressOrCidr } from './addresses.js';
import { ConfigError, integer, type Source } from './errors.js';

export interface ServiceLimits {
  /** Requests per minute per token; 0 turns per-token limiting off. */
  readonly rateLimitPerMinute: number;
  /** Requests per minute per client IP for requests without a valid token; 0 turns it off. */
  readonly anonymousRateLimitPerMinute: number;
  /** When set, rate-limit counters live in this Redis and every instance shares them. */
  readonly redisUrl: string | undefined;
  /** Prefix of the Redis keys, so several deployments can share one Redis. */
  readonly rateLimitNamespace: string;
  /** Longest a client may take to send the request line and headers (slowloris defence). */
  readonly headersTimeoutMs: number;
  /** Longest a client may take to send the whole request, body included. */
  readonly requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open between requests. */
  readonly keepAliveTimeoutMs: number;
  /** A socket with no traffic in either direction for this long is closed (0: never). */
  readonly connectionTimeoutMs: number;
  /** After an early answer (a 413, a 401), this much of the body is still read and dropped, so the client sees it. */
  readonly lingerLimitBytes: number;
  readonly lingerTimeoutMs: number;
  /** Largest request head (request line and headers) in bytes; 431 above. */
  readonly maxHeaderSizeBytes: number;
  /** Origins allowed to call the API from a browser; empty: CORS off. */
  readonly corsOrigins: readonly string[];
  /** Strict-Transport-Security max-age in seconds; 0: no HSTS header. */
  readonly hstsMaxAgeSeconds: number;
  /** Which proxies' X-Forwarded-For to believe: it decides the address the anonymous rate limit counts by. */
  readonly trustProxy: boolean | number | string[];
}

// An origin is scheme, host and optional port: no path, no wildcard.
const ORIGIN = /^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/;

function corsOrigins(source: Source): string[] {
  const origins = (source.CORS_ORIGINS ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '');
  for (const origin of origins) {
    if (!ORIGIN.test(origin)) {
      throw new ConfigError(
        `CORS_ORIGINS must be a comma-separated list of origins like https://app.example.com (got '${origin}')`,
      );
    }
  }
  return origins;
}

function redisUrl(source: Source): string | undefined {
  const url = source.REDIS_URL;
  if (url === undefined || url === '') return undefined;
  if (!/^rediss?:\/\/.+/.test(url))
    throw new ConfigError(`REDIS_URL must be redis://host:port or rediss://host:port (got '${url}')`);
  return url;
}

function trustProxy(source: Source): boolean | number | string[] {
  const raw = (source.TRUST_PROXY ?? '').trim();
  if (raw === '' || raw === 'false') return false;
  if (/^\d+$/.test(raw)) return integer(source, 'TRUST_PROXY', 0, 0, 100);
  const addresses = raw
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a !== '');
  for (const address of addresses) {
    if (!isAddressOrCidr(address)) {
      throw new ConfigError(
        `TRUST_PROXY must be false, a number of proxy hops, or a comma-separated list of proxy addresses/CIDRs (got '${address}')`,
      );
    }
  }
  return addresses;
}

export function loadServiceLimits(source: Source): ServiceLimits {
  const rateLimitPerMinute = integer(source, 'RATE_LIMIT', 0, 0, 100_000_000);
  const requestTimeoutMs = integer(source, 'REQUEST_TIMEOUT_MS', 30_000, 1000, 3_600_000);
  const headersTimeoutMs = integer(source, 'HEADERS_TIMEOUT_MS', 10_000, 500, 3_600_000);
  // Node refuses to start with a headers timeout longer than the request timeout.
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(
      `HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not exceed REQUEST_TIMEOUT_MS (${requestTimeoutMs})`,
    );
  }
  return {
    rateLimitPerMinute,
    // Unset, anonymous requests get the same budget per IP as a token gets.
    anonymousRateLimitPerMinute: integer(source, 'RATE_LIMIT_ANONYMOUS', rateLimitPerMinute, 0, 100_000_000),
    redisUrl: redisUrl(source),
    rateLimitNamespace: source.RATE_LIMIT_NAMESPACE || 'plantstore:ratelimit:',
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: integer(source, 'KEEP_ALIVE_TIMEOUT_MS', 72_000, 1000, 3_600_000),
    connectionTimeoutMs: integer(source, 'CONNECTION_TIMEOUT_MS', 120_000, 0, 3_600_000),
    lingerLimitBytes: integer(source, 'LINGER_LIMIT', 16 * 1024 * 1024, 0, 2 ** 40),
    lingerTimeoutMs: integer(source, 'LINGER_TIMEOUT_MS', 5000, 0, 3_600_000),
    maxHeaderSizeBytes: integer(source, 'MAX_HEADER_SIZE', 16 * 1024, 1024, 1024 * 1024),
    corsOrigins: corsOrigins(source),
    hstsMaxAgeSeconds: integer(source, 'HSTS_MAX_AGE', 0, 0, 2 * 365 * 86_400),
    trustProxy: trustProxy(source),
  };
}
