/**
 * Rate limiting over real sockets: RATE_LIMIT requests per minute per token,
 * RATE_LIMIT_ANONYMOUS per client address for requests without a valid token;
 * 429 RATE_LIMITED Error records with Retry-After, RateLimit-* headers on every
 * limited response; in-process by default, shared by every instance through Redis
 * when REDIS_URL is set; and failing open (never failing requests) when Redis is
 * down.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildCheckedApp } from '../support/checked-app.js';
import { loadConfig } from '../../src/config/index.js';
import { Errors } from '../../src/http/errors.js';
import { issueToken } from '../../src/tokens/token-service.js';
import { assertErrorRecord, listeningHarness, type ListeningHarness } from '../hostile/listening.js';

const REDIS_URL = process.env.PLANTSTORE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly headers: Headers;
}

async function get(url: string, path: string, token?: string): Promise<Answer> {
  const response = await fetch(`${url}${path}`, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  return { status: response.status, body: await response.text(), headers: response.headers };
}

function assertRateLimited(answer: Answer, limit: number): void {
  assertErrorRecord(answer, Errors.RATE_LIMITED);
  const retryAfter = Number(answer.headers.get('retry-after'));
  assert.ok(
    Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60,
    `Retry-After: ${answer.headers.get('retry-after')}`,
  );
  assert.equal(answer.headers.get('ratelimit-limit'), String(limit));
  assert.equal(answer.headers.get('ratelimit-remaining'), '0');
  assert.equal(answer.headers.get('ratelimit-reset'), String(retryAfter));
  assert.equal(answer.headers.get('www-authenticate'), null);
}

async function redisReachable(): Promise<boolean> {
  const { hostname, port } = new URL(REDIS_URL);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 6379) });
    socket.setTimeout(1000, () => (socket.destroy(), resolve(false)));
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

describe('rate limiting, in-process', () => {
  let h: ListeningHarness;
  before(async () => {
    h = await listeningHarness({ env: { RATE_LIMIT: '5', RATE_LIMIT_ANONYMOUS: '3' } });
  });
  after(() => h.close());

  it('a token gets RATE_LIMIT requests a minute, with RateLimit headers, then 429 with Retry-After', async () => {
    for (let i = 1; i <= 5; i++) {
      const answer = await get(h.url, '/plants', h.tokens.all);
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get('ratelimit-limit'), '5');
      assert.equal(answer.headers.get('ratelimit-remaining'), String(5 - i));
      assert.match(answer.headers.get('ratelimit-reset') ?? '', /^\d+$/);
      assert.equal(answer.headers.get('ratelimit-policy'), '5;w=60');
    }
    const refused = await get(h.url, '/plants', h.tokens.all);
    assertRateLimited(refused, 5);
    assert.match(refused.body, /this token/);
    // A refused request is refused before its body is read: a create is refused too.
    const create = await fetch(`${h.url}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.tokens.all}`, 'content-type': 'application/json' },
      body: '{"id": 1, "name": "over budget"}',
    });
    assert.equal(create.status, 429);
  });

  it('each token has its own budget', async () => {
    for (let i = 0; i < 5; i++) assert.equal((await get(h.url, '/plants', h.tokens.read)).status, 200);
    assert.equal((await get(h.url, '/plants', h.tokens.read)).status, 429);
  });

  it('requests without a valid token share a per-address budget; failed credentials count and then get 429 instead of 401', async () => {
    const unknown = `pst_${'Q'.repeat(43)}`;
    assert.equal((await get(h.url, '/healthz')).status, 200);
    assert.equal((await get(h.url, '/plants')).status, 401);
    assert.equal((await get(h.url, '/plants', unknown)).status, 401);
    const refused = await get(h.url, '/plants', unknown);
    assertRateLimited(refused, 3);
    assert.match(refused.body, /without a valid token/);
    assertRateLimited(await get(h.url, '/healthz'), 3);
    assertRateLimited(await get(h.url, '/openapi.json'), 3);
  });

  it('a client with a valid token is not held back by its address having spent the anonymous budget', async () => {
    assertRateLimited(await get(h.url, '/healthz'), 3);
    const create = await fetch(`${h.url}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.tokens.write}`, 'content-type': 'application/json' },
      body: '{"id": 2, "name": "has a token"}',
    });
    assert.equal(create.status, 200);
    assert.equal(create.headers.get('ratelimit-remaining'), '4');
    // A valid token without the scope is charged to its token, not to the spent address.
    const forbidden = await get(h.url, '/plants', h.tokens.admin);
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.headers.get('ratelimit-remaining'), '4');
  });

  it('the limiter logs the token id, never the secret', () => {
    const logs = h.logs();
    assert.match(logs, /"rateLimitKey":"token:tok_[0-9a-f]{16}".*rate limit exceeded/);
    for (const secret of Object.values(h.tokens)) assert.ok(!logs.includes(secret.slice(4)));
  });
});

describe('rate limiting off (RATE_LIMIT=0, the default)', () => {
  it('adds no headers and never refuses', async () => {
    const h = await listeningHarness();
    try {
      for (let i = 0; i < 20; i++) {
        const answer = await get(h.url, '/healthz');
        assert.equal(answer.status, 200);
        assert.equal(answer.headers.get('ratelimit-limit'), null);
      }
    } finally {
      await h.close();
    }
  });
});

describe('rate limiting shared through Redis', async () => {
  const reachable = await redisReachable();
  // CI sets PLANTSTORE_REQUIRE_REDIS=1: there an unreachable Redis is a failure, not a skip.
  if (!reachable && process.env.PLANTSTORE_REQUIRE_REDIS === '1') {
    throw new Error(
      `Redis at ${REDIS_URL} is unreachable and PLANTSTORE_REQUIRE_REDIS=1: the shared rate-limit tests must run`,
    );
  }
  if (!reachable)
    process.stderr.write(`\n!!! Redis at ${REDIS_URL} unreachable: skipping the shared rate-limit tests\n\n`);

  it(
    'two instances with one REDIS_URL draw on one budget per token',
    { skip: !reachable && `Redis at ${REDIS_URL} unreachable` },
    async () => {
      // A namespace of its own, so concurrent runs never share counters.
      const env = {
        RATE_LIMIT: '6',
        REDIS_URL,
        RATE_LIMIT_NAMESPACE: `plantstore-test:${randomBytes(6).toString('hex')}:`,
      };
      const h = await listeningHarness({ env });
      let second: FastifyInstance | undefined;
      try {
        second = await buildCheckedApp(loadConfig({ DATABASE_URL: h.databaseUrl, LOG_LEVEL: 'silent', ...env }), {
          store: h.store,
        });
        const secondUrl = await second.listen({ port: 0, host: '127.0.0.1' });
        const token = (await issueToken(h.store.tokens, { name: 'shared', scopes: ['plants:read'] })).secret;
        const statuses: number[] = [];
        for (let i = 0; i < 8; i++) {
          const answer = await get(i % 2 === 0 ? h.url : secondUrl, '/plants', token);
          statuses.push(answer.status);
          if (answer.status === 200) assert.equal(answer.headers.get('ratelimit-remaining'), String(5 - i));
        }
        assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 429, 429]);
        assertRateLimited(await get(secondUrl, '/plants', token), 6);
      } finally {
        await second?.close();
        await h.close();
      }
    },
  );

  it('fails open when Redis cannot be reached: requests are served, a warning is logged', async () => {
    const h = await listeningHarness({ env: { RATE_LIMIT: '2', REDIS_URL: 'redis://127.0.0.1:1' } });
    try {
      for (let i = 0; i < 5; i++) assert.equal((await get(h.url, '/plants', h.tokens.read)).status, 200);
      assert.match(h.logs(), /rate-limit (Redis|store)/);
    } finally {
      await h.close();
    }
  });
});

describe('the OpenAPI document', () => {
  it('documents 429 with Retry-After and the RateLimit headers on every operation, and the limits in force', async () => {
    const h = await listeningHarness({ env: { RATE_LIMIT: '600', RATE_LIMIT_ANONYMOUS: '60' } });
    try {
      const doc = JSON.parse((await get(h.url, '/openapi.json')).body) as {
        info: { description: string };
        paths: Record<
          string,
          Record<
            string,
            {
              responses: Record<
                string,
                { headers?: Record<string, unknown>; content?: Record<string, { schema: { $ref: string } }> }
              >;
            }
          >
        >;
      };
      for (const [path, methods] of Object.entries(doc.paths)) {
        for (const [method, operation] of Object.entries(methods)) {
          const limited = operation.responses['429'];
          assert.ok(limited, `${method} ${path} documents 429`);
          assert.equal(limited.content?.['application/json']?.schema.$ref, '#/components/schemas/Error');
          for (const name of [
            'Retry-After',
            'RateLimit-Limit',
            'RateLimit-Remaining',
            'RateLimit-Reset',
            'RateLimit-Policy',
          ]) {
            assert.ok(limited.headers?.[name], `${method} ${path} 429 documents ${name}`);
          }
          const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'))?.[1];
          assert.ok(
            success?.headers?.['RateLimit-Remaining'],
            `${method} ${path} success documents RateLimit-Remaining`,
          );
        }
      }
      assert.match(
        doc.info.description,
        /Each token may make 600 requests a minute; requests without a valid token, 60 a minute per client address/,
      );
      assert.match(doc.info.description, /431 HEADERS_TOO_LARGE/);
    } finally {
      await h.close();
    }
  });
});
