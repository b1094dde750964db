/**
 * Per-token rate limiting (per address without a valid token) in fixed one-minute windows: 429 RATE_LIMITED
 * with Retry-After, and RateLimit-* headers (draft-ietf-httpapi-ratelimit-headers).
 *
 * Each request is charged once, as early as its identity is known: no Authorization header, by address in
 * onRequest; an authenticated token, by token id in preParsing, so a limited client cannot make us parse
 * anything; a 403, by token id in onSend; a 401 or anything that ended earlier, by address in onSend.
 * The key is the token id, never the secret, so nothing secret reaches Redis or the logs.
 */
import rateLimit from '@fastify/rate-limit';
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, failure } from '../../http/errors.js';
import { clusterRateLimitStore } from './rate-limit-cluster-store.js';
import { connectRateLimitRedis, throttledWarning } from './rate-limit-store.js';
import type { ServiceLimits } from '../../config/service-limits.js';

const WINDOW_MS = 60_000;
const TOKEN_KEY = 'token:';
const ADDRESS_KEY = 'ip:';

declare module 'fastify' {
  interface FastifyRequest {
    /** The budget this request was charged to; null until it has been. */
    rateLimitKey: string | null;
  }
}

interface Verdict {
  readonly limit: number;
  readonly remaining: number;
  readonly resetSeconds: number;
  readonly exceeded: boolean;
}

function setHeaders(reply: FastifyReply, verdict: Verdict): void {
  void reply.headers({
    'ratelimit-limit': verdict.limit,
    'ratelimit-remaining': verdict.remaining,
    'ratelimit-reset': verdict.resetSeconds,
    'ratelimit-policy': `${verdict.limit};w=${WINDOW_MS / 1000}`,
  });
}

function rateLimited(key: string, verdict: Verdict): ApiError {
  const who = key.startsWith(TOKEN_KEY) ? 'this token' : 'requests without a valid token from this address';
  return failure('RATE_LIMITED', [verdict.limit, who, verdict.resetSeconds], {
    'retry-after': String(verdict.resetSeconds),
  });
}

export const rateLimiting = fp(
  async (app: FastifyInstance, limits: ServiceLimits) => {
    const perToken = limits.rateLimitPerMinute;
    const perAddress = limits.anonymousRateLimitPerMinute;
    app.decorateRequest('rateLimitKey', null);
    if (perToken === 0 && perAddress === 0) return;

    const redis = limits.redisUrl === undefined ? undefined : await connectRateLimitRedis(limits.redisUrl, app.log);
    if (redis !== undefined)
      app.addHook('onClose', async () => void (await redis.quit().catch(() => redis.disconnect())));
    await app.register(rateLimit, {
      global: false,
      timeWindow: WINDOW_MS,
      max: (_request: FastifyRequest, key: string) => (key.startsWith(TOKEN_KEY) ? perToken : perAddress),
      keyGenerator: (request: FastifyRequest) => request.rateLimitKey ?? '',
      cache: 10_000,
      ...(redis === undefined ? {} : { redis, nameSpace: limits.rateLimitNamespace }),
      // Without Redis, a multi-worker instance counts in its primary: one budget per instance.
      ...(redis === undefined && app.cluster !== null ? { store: clusterRateLimitStore(app.cluster.primary) } : {}),
    });
    const count = app.createRateLimit();
    const warnStoreFailure = throttledWarning(app.log, 'rate-limit store failed; letting requests through');

    // Addresses over their anonymous budget, until their window ends: their next
    // anonymous requests are refused without a round trip to the counter store.
    const spentAddresses = new Map<string, number>();
    // Keys already logged as over budget in their current window (one line per key per window).
    const loggedUntil = new Map<string, number>();

    function noteExceeded(request: FastifyRequest, key: string, resetAt: number): void {
      if (key.startsWith(ADDRESS_KEY)) {
        // Bounded: many addresses over budget at once just lose the shortcut, not the limit.
        if (spentAddresses.size > 10_000) spentAddresses.clear();
        spentAddresses.set(key, resetAt);
      }
      if ((loggedUntil.get(key) ?? 0) > Date.now()) return;
      if (loggedUntil.size > 10_000) loggedUntil.clear();
      loggedUntil.set(key, resetAt);
      // The key is a token id or an address: never a secret.
      request.log.warn({ rateLimitKey: key }, 'rate limit exceeded');
    }

    /** Charges the request to `key`; returns the 429 to answer with, if over budget. */
    async function charge(request: FastifyRequest, reply: FastifyReply, key: string): Promise<ApiError | undefined> {
      request.rateLimitKey = key;
      const limit = key.startsWith(TOKEN_KEY) ? perToken : perAddress;
      if (limit === 0) return undefined;
      const spentUntil = spentAddresses.get(key);
      if (spentUntil !== undefined) {
        const left = spentUntil - Date.now();
        if (left > 0) {
          const verdict = { limit, remaining: 0, resetSeconds: Math.ceil(left / 1000), exceeded: true };
          setHeaders(reply, verdict);
          return rateLimited(key, verdict);
        }
        spentAddresses.delete(key);
      }
      let result: Awaited<ReturnType<typeof count>>;
      try {
        result = await count(request);
      } catch (error) {
        warnStoreFailure(error);
        return undefined;
      }
      if (result.isAllowed) return undefined;
      const verdict = {
        limit: result.max,
        remaining: result.remaining,
        resetSeconds: result.ttlInSeconds,
        exceeded: result.isExceeded,
      };
      setHeaders(reply, verdict);
      if (!verdict.exceeded) return undefined;
      noteExceeded(request, key, Date.now() + result.ttl);
      return rateLimited(key, verdict);
    }

    app.addHook('onRequest', async (request, reply) => {
      if (request.headers.authorization !== undefined) return;
      const refusal = await charge(request, reply, ADDRESS_KEY + request.ip);
      if (refusal !== undefined) throw refusal;
    });

    app.addHook('preParsing', async (request, reply, payload) => {
      if (request.rateLimitKey !== null) return payload;
      const key = request.token === undefined ? ADDRESS_KEY + request.ip : TOKEN_KEY + request.token.id;
      const refusal = await charge(request, reply, key);
      if (refusal !== undefined) throw refusal;
      return payload;
    });

    /** The token behind a 403: authenticated, but the auth hook only keeps tokens that pass the scope check. */
    async function forbiddenToken(request: FastifyRequest, reply: FastifyReply): Promise<string | undefined> {
      if (reply.statusCode !== 403) return undefined;
      const secret = /^Bearer +(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
      if (secret === undefined) return undefined;
      const result = await request.server.authenticator.authenticate(secret); // a cache hit: it just authenticated
      return result.ok ? TOKEN_KEY + result.token.id : undefined;
    }

    app.addHook('onSend', async (request, reply, payload) => {
      if (request.rateLimitKey !== null) return payload;
      const refusal = await charge(request, reply, (await forbiddenToken(request, reply)) ?? ADDRESS_KEY + request.ip);
      if (refusal === undefined) return payload;
      // The failure (typically a 401) is replaced by the 429: the client is to back off.
      reply.removeHeader('www-authenticate');
      void reply.code(refusal.statusCode).headers(refusal.headers).type('application/json; charset=utf-8');
      return JSON.stringify(refusal.toRecord());
    });
    // Its refusals become Error records (error-records). The auth plugin's token and authenticator are read
    // only while requests are answered, so auth, registered after this, is not listed.
  },
  { name: 'rate-limiting', dependencies: ['error-records', 'cluster'] },
);
