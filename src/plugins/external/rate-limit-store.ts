/**
 * Rate-limit counters in this process, or in Redis (REDIS_URL) so every instance shares one budget. Redis
 * trouble never takes the API down: commands fail fast and the limiter fails open, warning now and then.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';

const REDIS_COMMAND_TIMEOUT_MS = 500;
const REDIS_CONNECT_TIMEOUT_MS = 2000;
const WARN_EVERY_MS = 30_000;

/** Logs at most one warning per period, so an outage cannot flood the logs. */
export function throttledWarning(log: FastifyBaseLogger, message: string): (error: unknown) => void {
  let lastWarnedAt = -Infinity;
  return (error) => {
    const now = Date.now();
    if (now - lastWarnedAt < WARN_EVERY_MS) return;
    lastWarnedAt = now;
    log.warn({ err: error }, message);
  };
}

/** Waits briefly for Redis so the first requests are counted; if it is late, the limiter fails open meanwhile. */
export async function connectRateLimitRedis(url: string, log: FastifyBaseLogger): Promise<Redis> {
  // Loaded here, only when REDIS_URL is set: otherwise every process (the CLI
  // included) would pay ioredis's start-up time and memory (bench/README.md, "Figures behind code comments").
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    // Rate limiting must not keep a stopping process alive.
    lazyConnect: false,
  });
  redis.on('error', throttledWarning(log, 'rate-limit Redis unavailable; requests are not being rate limited'));
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      log.warn(
        { timeoutMs: REDIS_CONNECT_TIMEOUT_MS },
        'rate-limit Redis not ready yet; starting without it (rate limiting fails open until it answers)',
      );
      resolve();
    }, REDIS_CONNECT_TIMEOUT_MS);
    redis.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  return redis;
}
