/** The public-service limits: documented defaults, and clear start-up errors for bad values. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/index.js';

const load = (env: Record<string, string>) => loadConfig({ DATABASE_URL: 'sqlite:/tmp/x.db', ...env }).limits;

describe('limits configuration', () => {
  it('has the defaults docs/security.md states', () => {
    assert.deepEqual(load({}), {
      rateLimitPerMinute: 0,
      anonymousRateLimitPerMinute: 0,
      redisUrl: undefined,
      rateLimitNamespace: 'plantstore:ratelimit:',
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 72_000,
      connectionTimeoutMs: 120_000,
      lingerLimitBytes: 16 * 1024 * 1024,
      lingerTimeoutMs: 5000,
      maxHeaderSizeBytes: 16_384,
      corsOrigins: [],
      hstsMaxAgeSeconds: 0,
      trustProxy: false,
    });
  });

  it('reads every variable', () => {
    const limits = load({
      RATE_LIMIT: '600',
      RATE_LIMIT_ANONYMOUS: '60',
      REDIS_URL: 'redis://127.0.0.1:6379',
      RATE_LIMIT_NAMESPACE: 'x:',
      HEADERS_TIMEOUT_MS: '5000',
      REQUEST_TIMEOUT_MS: '20000',
      KEEP_ALIVE_TIMEOUT_MS: '61000',
      CONNECTION_TIMEOUT_MS: '0',
      LINGER_LIMIT: '1048576',
      LINGER_TIMEOUT_MS: '0',
      MAX_HEADER_SIZE: '8192',
      CORS_ORIGINS: 'https://a.example, http://localhost:3000',
      HSTS_MAX_AGE: '63072000',
      TRUST_PROXY: '1',
    });
    assert.deepEqual(limits, {
      rateLimitPerMinute: 600,
      anonymousRateLimitPerMinute: 60,
      redisUrl: 'redis://127.0.0.1:6379',
      rateLimitNamespace: 'x:',
      headersTimeoutMs: 5000,
      requestTimeoutMs: 20_000,
      keepAliveTimeoutMs: 61_000,
      connectionTimeoutMs: 0,
      lingerLimitBytes: 1_048_576,
      lingerTimeoutMs: 0,
      maxHeaderSizeBytes: 8192,
      corsOrigins: ['https://a.example', 'http://localhost:3000'],
      hstsMaxAgeSeconds: 63_072_000,
      trustProxy: 1,
    });
    assert.equal(
      load({ RATE_LIMIT: '100' }).anonymousRateLimitPerMinute,
      100,
      'the anonymous limit follows RATE_LIMIT when unset',
    );
    assert.deepEqual(load({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy, ['10.0.0.0/8', '127.0.0.1']);
  });

  for (const [env, message] of [
    [{ RATE_LIMIT: '-1' }, /RATE_LIMIT must be an integer/],
    [{ RATE_LIMIT: 'lots' }, /RATE_LIMIT must be an integer/],
    [{ HEADERS_TIMEOUT_MS: '40000' }, /HEADERS_TIMEOUT_MS \(40000\) must not exceed REQUEST_TIMEOUT_MS \(30000\)/],
    [{ MAX_HEADER_SIZE: '100' }, /MAX_HEADER_SIZE must be an integer from 1024/],
    [{ CORS_ORIGINS: '*' }, /CORS_ORIGINS must be a comma-separated list of origins/],
    [{ CORS_ORIGINS: 'https://a.example/path' }, /CORS_ORIGINS/],
    [{ REDIS_URL: '127.0.0.1:6379' }, /REDIS_URL must be redis:\/\//],
    [{ TRUST_PROXY: 'yes please' }, /TRUST_PROXY must be false, a number of proxy hops/],
  ] as const) {
    it(`refuses ${JSON.stringify(env)}`, () => {
      assert.throws(
        () => load(env),
        (error: unknown) => error instanceof ConfigError && message.test(error.message),
      );
    });
  }
});
