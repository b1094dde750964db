/**
 * GET /metrics: who may read it (METRICS_AUTH, METRICS_PORT), and what it says
 * about requests, latency, store calls, store failures and connection pools.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { SERVICE_VERSION } from '../../src/system/version.js';
import { StoreUnavailableError } from '../../src/store/errors.js';
import type { PoolStatsSource } from '../../src/metrics/pool.js';
import type { WebhookBacklogSource } from '../../src/metrics/webhook-backlog.js';
import type { Store } from '../../src/store/types.js';
import { assertErrorRecord } from '../hostile/listening.js';
import { head, rawExchange } from '../hostile/raw-http.js';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, postPlant, type Harness } from '../support/harness.js';

async function scrape(h: Harness, token = h.tokens.admin): Promise<string> {
  const response = await h.request({ method: 'GET', url: '/metrics', headers: bearer(token) });
  assert.equal(response.statusCode, 200, response.body);
  assert.match(String(response.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  return response.body;
}

/** A series as name and its labels in a canonical order (the exposition may list labels in any order). */
function canonical(series: string): string {
  const open = series.indexOf('{');
  if (open === -1) return series;
  const labels = series.slice(open + 1, -1).match(/[a-z_]+="(?:[^"\\]|\\.)*"/g) ?? [];
  return `${series.slice(0, open)}{${[...labels].sort().join(',')}}`;
}

/** The value of one sample line, e.g. sample(text, 'x_total{a="b"}'). */
function sample(text: string, series: string): number | undefined {
  const wanted = canonical(series);
  for (const line of text.split('\n')) {
    const space = line.lastIndexOf(' ');
    if (space > 0 && canonical(line.slice(0, space)) === wanted) return Number(line.slice(space + 1));
  }
  return undefined;
}

describe('GET /metrics', () => {
  describe('requests, latency and store calls', () => {
    let h: Harness;
    let failNextCreate = false;
    before(async () => {
      h = await createHarness({
        wrapStore: (store) => {
          const createPlant = store.plants.createPlant.bind(store.plants);
          const plants = Object.assign(Object.create(store.plants) as Store['plants'], {
            createPlant: (plant: Parameters<Store['plants']['createPlant']>[0]) => {
              if (!failNextCreate) return createPlant(plant);
              failNextCreate = false;
              return Promise.reject(new StoreUnavailableError('disk full (injected)'));
            },
          });
          return Object.assign(Object.create(store) as Store, { plants });
        },
      });
    });
    after(() => h.close());

    it('needs the metrics:read or the admin scope by default', async () => {
      assert.equal((await h.request({ method: 'GET', url: '/metrics' })).statusCode, 401);
      assert.equal(
        (await h.request({ method: 'GET', url: '/metrics', headers: bearer(h.tokens.write) })).statusCode,
        403,
      );
      await scrape(h);
    });

    it('counts requests by method, route template and status, with latency histograms', async () => {
      assert.equal((await postPlant(h, '{"id": 1, "name": "a"}')).statusCode, 200);
      assert.equal((await postPlant(h, '{"id": 1, "name": "b"}')).statusCode, 409);
      assert.equal(
        (await h.request({ method: 'GET', url: '/plants/123456789', headers: bearer(h.tokens.read) })).statusCode,
        404,
      );
      assert.equal((await h.request({ method: 'GET', url: '/no/such/thing' })).statusCode, 404);
      const text = await scrape(h);
      assert.equal(sample(text, 'plantstore_http_requests_total{method="POST",route="/plants",status_code="200"}'), 1);
      assert.equal(sample(text, 'plantstore_http_requests_total{method="POST",route="/plants",status_code="409"}'), 1);
      assert.equal(
        sample(text, 'plantstore_http_requests_total{method="GET",route="/plants/:id",status_code="404"}'),
        1,
      );
      assert.equal(
        sample(text, 'plantstore_http_requests_total{method="GET",route="(unmatched)",status_code="404"}'),
        1,
      );
      assert.doesNotMatch(text, /123456789|no\/such/, 'ids and unknown paths never become labels');
      const series = 'method="POST",route="/plants",status_code="200"';
      assert.equal(sample(text, `plantstore_http_request_duration_seconds_count{${series}}`), 1);
      assert.equal(sample(text, `plantstore_http_request_duration_seconds_bucket{${series},le="+Inf"}`), 1);
      assert.ok((sample(text, `plantstore_http_request_duration_seconds_sum{${series}}`) ?? 0) > 0);
      assert.match(text, /^# TYPE plantstore_http_request_duration_seconds histogram$/m);
    });

    it('times store calls and counts their failures by kind', async () => {
      failNextCreate = true;
      assert.equal((await postPlant(h, '{"id": 2, "name": "c"}')).statusCode, 503);
      const text = await scrape(h);
      assert.equal(
        sample(text, 'plantstore_store_operation_duration_seconds_count{operation="plants.createPlant"}'),
        3,
      );
      assert.equal(sample(text, 'plantstore_store_errors_total{operation="plants.createPlant",kind="unavailable"}'), 1);
      assert.equal(sample(text, 'plantstore_store_errors_total{operation="plants.createPlant",kind="other"}'), 0);
      assert.ok(
        (sample(text, 'plantstore_store_operation_duration_seconds_count{operation="tokens.findTokenBySecretHash"}') ??
          0) >= 1,
      );
      assert.equal(sample(text, `plantstore_info{store="sqlite",version="${SERVICE_VERSION}"}`), 1);
      assert.match(text, /^process_resident_memory_bytes /m);
      assert.match(text, /^nodejs_eventloop_lag_seconds /m);
    });

    it('is documented in the OpenAPI document, with its scope', async () => {
      const doc = (await h.request({ method: 'GET', url: '/openapi.json' })).json() as {
        paths: Record<string, { get: { security: unknown } }>;
      };
      assert.deepEqual(doc.paths['/metrics']?.get.security, [
        { bearerAuth: ['metrics:read'] },
        { bearerAuth: ['admin'] },
      ]);
    });
  });

  it('METRICS_AUTH=none opens it to anyone who can reach the port', async () => {
    const h = await createHarness({ env: { METRICS_AUTH: 'none' } });
    try {
      assert.equal((await h.request({ method: 'GET', url: '/metrics' })).statusCode, 200);
    } finally {
      await h.close();
    }
  });

  it('METRICS_PORT moves it to its own listener, still behind the admin scope, closed with the app', async () => {
    const h = await createHarness({ env: { METRICS_PORT: '0' } });
    try {
      assert.equal(
        (await h.request({ method: 'GET', url: '/metrics', headers: bearer(h.tokens.admin) })).statusCode,
        404,
      );
      const server = h.app.metricsServer;
      assert.ok(server !== null);
      const { address, port } = server.server.address() as AddressInfo;
      assert.equal(address, '127.0.0.1');
      const url = `http://127.0.0.1:${port}/metrics`;
      assert.equal((await fetch(url)).status, 401);
      const response = await fetch(url, { headers: bearer(h.tokens.admin) });
      assert.equal(response.status, 200);
      assert.match(
        await response.text(),
        new RegExp(`^plantstore_info\\{store="sqlite",version="${SERVICE_VERSION.replaceAll('.', '\\.')}"\\} 1$`, 'm'),
      );
      assert.equal((await fetch(`http://127.0.0.1:${port}/plants`)).status, 404);
      await h.close();
      await assert.rejects(fetch(url));
    } finally {
      await h.close().catch(() => undefined);
    }
  });

  it("the METRICS_PORT listener keeps the API port's limits: an oversized request head gets 431 as an Error record", async () => {
    const h = await createHarness({ env: { METRICS_PORT: '0', MAX_HEADER_SIZE: '2048' } });
    try {
      const { port } = (h.app.metricsServer as NonNullable<typeof h.app.metricsServer>).server.address() as AddressInfo;
      // 4 KB of headers: under Node's default limit (16 KB), over the configured 2 KB.
      const response = await fetch(`http://127.0.0.1:${port}/metrics`, {
        headers: { ...bearer(h.tokens.admin), 'x-padding': 'a'.repeat(4096) },
      });
      assert.equal(response.status, 431);
      assert.equal(((await response.json()) as { error: number }).error, 43101);
    } finally {
      await h.close();
    }
  });

  it('the METRICS_PORT listener answers protocol edge cases as the API port does: Error records, not bare statuses', async () => {
    const h = await createHarness({ env: { METRICS_PORT: '0' } });
    try {
      const { port } = (h.app.metricsServer as NonNullable<typeof h.app.metricsServer>).server.address() as AddressInfo;
      const url = `http://127.0.0.1:${port}`;
      assertErrorRecord(
        await rawExchange(url, 'CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n'),
        Errors.BAD_REQUEST,
      );
      assertErrorRecord(
        await rawExchange(url, 'GET /metrics HTTP/1.1\r\nconnection: close\r\n\r\n'),
        Errors.BAD_REQUEST,
      );
      const expecting = await rawExchange(
        url,
        head('GET', '/metrics', { expect: 'something-else', authorization: `Bearer ${h.tokens.admin}` }),
      );
      assert.equal(expecting.status, 200, expecting.body);
    } finally {
      await h.close();
    }
  });

  it('reports connection-pool usage for a store with poolStats()', async () => {
    const h = await createHarness({
      wrapStore: (store) =>
        Object.assign(Object.create(store) as Store & PoolStatsSource, {
          poolStats: () => ({ total: 10, idle: 7, waiting: 2 }),
        }),
    });
    try {
      const text = await scrape(h);
      assert.equal(sample(text, 'plantstore_store_pool_connections{state="total"}'), 10);
      assert.equal(sample(text, 'plantstore_store_pool_connections{state="idle"}'), 7);
      assert.equal(sample(text, 'plantstore_store_pool_connections{state="waiting"}'), 2);
    } finally {
      await h.close();
    }
  });

  it('reports the webhook backlog for a webhook store with backlog(), read once per scrape', async () => {
    let reads = 0;
    const h = await createHarness({
      wrapStore: (store) => {
        const backlog = async () => {
          reads++;
          return { pending: 12, oldestPendingSeconds: 30.5 };
        };
        const webhooks = Object.assign(Object.create(store.webhooks) as Store['webhooks'] & WebhookBacklogSource, {
          backlog,
        });
        return Object.assign(Object.create(store) as Store, { webhooks });
      },
    });
    try {
      const text = await scrape(h);
      assert.equal(sample(text, 'plantstore_webhook_deliveries_pending'), 12);
      assert.equal(sample(text, 'plantstore_webhook_oldest_pending_seconds'), 30.5);
      assert.equal(reads, 1);
    } finally {
      await h.close();
    }
  });

  for (const backend of testBackends()) {
    it(`reports the real webhook backlog of the store [${backend.name}]`, async () => {
      // Port 1 refuses connections: the delivery fails and stays pending for its retry.
      const h = await createHarness({
        backend,
        env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: '1h' },
      });
      try {
        assert.equal(sample(await scrape(h), 'plantstore_webhook_deliveries_pending'), 0);
        const subscribed = await h.request({
          method: 'POST',
          url: '/webhooks',
          headers: { ...bearer(h.tokens.admin), 'content-type': 'application/json' },
          payload: '{"url": "http://127.0.0.1:1/hook"}',
        });
        assert.equal(subscribed.statusCode, 201, subscribed.body);
        assert.equal((await postPlant(h, '{"id": 1, "name": "announced"}')).statusCode, 200);
        await new Promise((resolve) => setTimeout(resolve, 50));
        const text = await scrape(h);
        assert.equal(sample(text, 'plantstore_webhook_deliveries_pending'), 1);
        assert.ok((sample(text, 'plantstore_webhook_oldest_pending_seconds') ?? -1) >= 0);
      } finally {
        await h.close();
      }
    });
  }

  for (const backend of testBackends()) {
    it(`reports how the store batches its work, as counters that only grow [${backend.name}]`, async () => {
      const h = await createHarness({ backend });
      try {
        const kinds = backend.name === 'sqlite' ? ['write'] : ['create', 'read'];
        const before = await scrape(h);
        for (const kind of kinds)
          assert.equal(sample(before, `plantstore_store_batches_total{kind="${kind}"}`), 0, kind);
        // Sent together, so they can share batches.
        const created = await Promise.all(
          Array.from({ length: 20 }, (_, i) => postPlant(h, `{"id": ${i + 1}, "name": "batched"}`)),
        );
        assert.deepEqual(
          created.map((r) => r.statusCode),
          Array(20).fill(200),
        );
        const read = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            h.request({ method: 'GET', url: `/plants/${i + 1}`, headers: bearer(h.tokens.read) }),
          ),
        );
        assert.deepEqual(
          read.map((r) => r.statusCode),
          Array(10).fill(200),
        );
        const text = await scrape(h);
        const carried = (kind: string) =>
          sample(text, `plantstore_store_batched_operations_total{kind="${kind}"}`) ?? Number.NaN;
        const batches = (kind: string) => sample(text, `plantstore_store_batches_total{kind="${kind}"}`) ?? Number.NaN;
        const writes = backend.name === 'sqlite' ? 'write' : 'create';
        assert.equal(carried(writes), 20);
        assert.ok(batches(writes) >= 1 && batches(writes) <= 20, `${batches(writes)} batches`);
        if (backend.name === 'postgres') {
          assert.equal(carried('read'), 10);
          assert.ok(batches('read') >= 1 && batches('read') <= 10, `${batches('read')} batches`);
        }
        // A second scrape with nothing new in between reports the same totals, not double.
        const again = await scrape(h);
        assert.equal(sample(again, `plantstore_store_batched_operations_total{kind="${writes}"}`), 20);
      } finally {
        await h.close();
      }
    });
  }

  for (const backend of testBackends().filter((b) => b.name === 'postgres')) {
    it('reports the PostgreSQL pool', async () => {
      const h = await createHarness({ backend });
      try {
        const text = await scrape(h);
        assert.ok((sample(text, 'plantstore_store_pool_connections{state="total"}') ?? 0) >= 1);
        assert.equal(sample(text, `plantstore_info{store="postgres",version="${SERVICE_VERSION}"}`), 1);
      } finally {
        await h.close();
      }
    });
  }
});
