/**
 * Managing subscriptions over HTTP: admin scope, validation, the SSRF policy, the
 * secret shown once, 404s from the catalogue, and the OpenAPI description.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { assertError } from '../support/assertions.js';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, json, type Harness } from '../support/harness.js';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- a parsed JSON document

for (const backend of testBackends())
  describe(`webhook subscriptions [${backend.name}]`, () => {
    let h: Harness;
    before(async () => {
      // The default policy: private destinations refused.
      h = await createHarness({ backend });
    });
    after(() => h.close());

    const post = (payload: unknown, token = h.tokens.admin) =>
      h.request({
        method: 'POST',
        url: '/webhooks',
        headers: { ...json, ...bearer(token) },
        payload: JSON.stringify(payload),
      });
    const get = (url: string, token = h.tokens.admin) => h.request({ method: 'GET', url, headers: bearer(token) });

    it('creates, lists, reads and deletes a subscription; the secret is shown only on creation', async () => {
      const created = await post({ url: 'https://93.184.216.34/hooks?x=1', description: 'inventory sync', ignored: 1 });
      assert.equal(created.statusCode, 201, created.body);
      const body = created.json() as {
        id: string;
        url: string;
        description: string;
        secret: string;
        createdAt: string;
      };
      assert.deepEqual(Object.keys(body).sort(), [
        'createdAt',
        'description',
        'enabled',
        'eventTypes',
        'id',
        'secret',
        'url',
      ]);
      assert.match(body.id, /^whk_[0-9a-f]{24}$/);
      assert.match(body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.equal(body.url, 'https://93.184.216.34/hooks?x=1');
      assert.equal(body.description, 'inventory sync');
      assert.ok(Math.abs(Date.parse(body.createdAt) - Date.now()) < 60_000);
      const { secret, ...shown } = body;

      const bare = await post({ url: 'http://8.8.8.8:8080/' });
      assert.equal(bare.statusCode, 201);

      // Kept and listed as it will be called, not as typed.
      const loose = await post({ url: 'HTTP:8.8.4.4:8080/a/../hook' });
      assert.equal(loose.statusCode, 201);
      assert.equal((loose.json() as { url: string }).url, 'http://8.8.4.4:8080/hook');
      const looseId = (loose.json() as { id: string }).id;
      assert.equal(((await get(`/webhooks/${looseId}`)).json() as { url: string }).url, 'http://8.8.4.4:8080/hook');
      assert.equal(
        (await h.request({ method: 'DELETE', url: `/webhooks/${looseId}`, headers: bearer(h.tokens.admin) }))
          .statusCode,
        204,
      );
      assert.equal(
        (bare.json() as Record<string, unknown>).description,
        undefined,
        'no description: omitted, not null',
      );

      const list = await get('/webhooks');
      assert.equal(list.statusCode, 200);
      const listed = list.json() as Record<string, unknown>[];
      assert.deepEqual(listed[0], shown);
      assert.equal(listed.length, 2);
      assert.ok(!list.body.includes(secret), 'the secret is never listed');

      const read = await get(`/webhooks/${body.id}`);
      assert.equal(read.statusCode, 200);
      assert.deepEqual(read.json(), shown);

      const log = await get(`/webhooks/${body.id}/deliveries`);
      assert.equal(log.statusCode, 200);
      assert.deepEqual(log.json(), []);

      const deleted = await h.request({
        method: 'DELETE',
        url: `/webhooks/${body.id}`,
        headers: bearer(h.tokens.admin),
      });
      assert.equal(deleted.statusCode, 204);
      assert.equal(deleted.body, '');
      assertError(await get(`/webhooks/${body.id}`), Errors.WEBHOOK_NOT_FOUND, body.id);
      assertError(
        await h.request({ method: 'DELETE', url: `/webhooks/${body.id}`, headers: bearer(h.tokens.admin) }),
        Errors.WEBHOOK_NOT_FOUND,
      );
      assertError(await get(`/webhooks/${body.id}/deliveries`), Errors.WEBHOOK_NOT_FOUND);
      assertError(
        await h.request({
          method: 'POST',
          url: `/webhooks/${body.id}/deliveries/dlv_x/retry`,
          headers: bearer(h.tokens.admin),
        }),
        Errors.WEBHOOK_NOT_FOUND,
      );
      const other = (bare.json() as { id: string }).id;
      assertError(
        await h.request({
          method: 'POST',
          url: `/webhooks/${other}/deliveries/dlv_nope/retry`,
          headers: bearer(h.tokens.admin),
        }),
        Errors.WEBHOOK_DELIVERY_NOT_FOUND,
        'dlv_nope',
      );
    });

    it('needs the admin scope', async () => {
      assertError(await post({ url: 'https://93.184.216.34/' }, h.tokens.write), Errors.INSUFFICIENT_SCOPE, 'admin');
      assertError(await get('/webhooks', h.tokens.read), Errors.INSUFFICIENT_SCOPE);
      assertError(await h.request({ method: 'GET', url: '/webhooks' }), Errors.TOKEN_MISSING);
      assert.equal((await post({ url: 'https://93.184.216.34/' }, h.tokens.all)).statusCode, 201);
    });

    it('refuses private-range, loopback and link-local URLs by default, by resolved address', async () => {
      for (const url of [
        'http://127.0.0.1:8080/hook',
        'http://10.0.0.5/hook',
        'http://192.168.1.10/',
        'http://169.254.169.254/latest/meta-data',
        'http://[::1]/',
        'http://localhost/',
        // IPv6 addresses that carry a loopback or private IPv4 one: IPv4-compatible, 6to4, NAT64.
        'http://[::127.0.0.1]/',
        'http://[::7f00:1]/',
        'http://[2002:7f00:1::]/',
        'http://[2002:a00:5::1]/',
        'http://[64:ff9b::10.0.0.5]/',
      ]) {
        const response = await post({ url });
        assertError(response, Errors.INVALID_WEBHOOK_URL, 'WEBHOOK_ALLOW_PRIVATE_URLS');
      }
      assertError(await post({ url: 'http://127.0.0.1/' }), Errors.INVALID_WEBHOOK_URL, 'resolves to 127.0.0.1');
    });

    it('refuses other schemes, credentials and malformed URLs, and checks the body', async () => {
      assertError(await post({ url: 'ftp://93.184.216.34/' }), Errors.INVALID_WEBHOOK_URL, 'http or https');
      assertError(await post({ url: 'https://user:pw@93.184.216.34/' }), Errors.INVALID_WEBHOOK_URL, 'credentials');
      assertError(await post({ url: 'not-a-url' }), Errors.INVALID_WEBHOOK_URL, 'absolute');
      assertError(await post({ url: 'not a url' }), Errors.INVALID_WEBHOOK_URL, 'spaces or control characters');
      assertError(
        await post({ url: 'http://93.184.216.34:0/' }),
        Errors.INVALID_WEBHOOK_URL,
        /url port must be from 1 to 65535$/,
      );
      assertError(await post({}), Errors.INVALID_FIELD, 'url');
      assertError(await post({ url: 'https://93.184.216.34/', description: '' }), Errors.INVALID_FIELD, 'description');
      assertError(
        await post({ url: 'https://93.184.216.34/', description: 'a\nb' }),
        Errors.INVALID_FIELD,
        'description',
      );
      assertError(await post({ url: `https://93.184.216.34/${'a'.repeat(2100)}` }), Errors.INVALID_FIELD, 'url');
      assertError(await get('/webhooks/whk_x/deliveries?limit=0'), Errors.INVALID_PARAMETER, 'limit');
      assertError(await get('/webhooks/whk_x/deliveries?status=lost'), Errors.INVALID_PARAMETER, 'status');
    });

    it("says what the delivery log's parameters take, in its own words rather than the validator's", async () => {
      assertError(
        await get('/webhooks/whk_x/deliveries?limit=0'),
        Errors.INVALID_PARAMETER,
        /^limit must be at least 1$/,
      );
      assertError(
        await get('/webhooks/whk_x/deliveries?limit=1001'),
        Errors.INVALID_PARAMETER,
        /^limit must be at most 1000$/,
      );
      assertError(
        await get('/webhooks/whk_x/deliveries?limit=99999999999'),
        Errors.INVALID_PARAMETER,
        /^limit must be at most 1000$/,
      );
      assertError(
        await get('/webhooks/whk_x/deliveries?limit=-99999999999'),
        Errors.INVALID_PARAMETER,
        /^limit must be at least 1$/,
      );
      assertError(
        await get('/webhooks/whk_x/deliveries?status=lost'),
        Errors.INVALID_PARAMETER,
        /^status must be one of 'pending', 'succeeded', 'failed'$/,
      );
    });
  });

describe('WEBHOOK_ALLOW_PRIVATE_URLS=true', () => {
  it('allows private destinations', async () => {
    const h = await createHarness({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } });
    try {
      const response = await h.request({
        method: 'POST',
        url: '/webhooks',
        headers: { ...json, ...bearer(h.tokens.admin) },
        payload: '{"url": "http://127.0.0.1:9/hook"}',
      });
      assert.equal(response.statusCode, 201, response.body);
    } finally {
      await h.close();
    }
  });
});

describe('the OpenAPI document', () => {
  let doc: Doc;
  before(async () => {
    const h = await createHarness({ env: { WEBHOOK_RETRY_SCHEDULE: '5s,5m', WEBHOOK_TIMEOUT_MS: '7000' } });
    doc = (await h.request({ method: 'GET', url: '/openapi.json' })).json() as Doc;
    await h.close();
  });

  it('documents the subscription operations, admin-only', () => {
    const operations = [
      ['/webhooks', 'post', '201'],
      ['/webhooks', 'get', '200'],
      ['/webhooks/{id}', 'get', '200'],
      ['/webhooks/{id}', 'delete', '204'],
      ['/webhooks/{id}/deliveries', 'get', '200'],
      ['/webhooks/{id}/deliveries/{deliveryId}/retry', 'post', '200'],
    ] as const;
    for (const [path, method, status] of operations) {
      const operation = doc.paths[path]?.[method];
      assert.ok(operation, `${method} ${path}`);
      assert.deepEqual(operation.security, [{ bearerAuth: ['admin'] }]);
      assert.ok(operation.responses[status], `${method} ${path} ${status}`);
    }
    assert.equal(
      doc.paths['/webhooks'].post.responses['201'].content['application/json'].schema.$ref,
      '#/components/schemas/CreatedWebhookSubscription',
    );
    assert.ok(doc.paths['/webhooks'].post.responses['400'].description.includes('INVALID_WEBHOOK_URL'));
    assert.ok(doc.paths['/webhooks/{id}'].get.responses['404'].description.includes('WEBHOOK_NOT_FOUND'));
    assert.ok(doc.components.schemas.WebhookDelivery);
  });

  it("explains PATCH /webhooks/{id}'s 412 in terms of a subscription, not only of plants", () => {
    const description = doc.paths['/webhooks/{id}'].patch.responses['412'].description as string;
    assert.match(description, /PRECONDITION_FAILED: .*webhook subscription/);
  });

  it('documents plant.created under webhooks: the NewPlant body, the Standard Webhooks headers, the 2xx acknowledgement', () => {
    const event = doc.webhooks['plant.created'].post;
    assert.equal(event.requestBody.content['application/json'].schema.$ref, '#/components/schemas/NewPlant');
    const headers = (event.parameters as { name: string; in: string; required: boolean }[]).filter(
      (p) => p.in === 'header',
    );
    assert.deepEqual(
      headers.map((p) => p.name),
      ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'webhook-event-type'],
    );
    assert.ok(headers.every((p) => p.required));
    assert.ok(event.responses['2XX']);
    // The configured timeout and schedule, not hard-coded ones.
    assert.match(event.description, /within 7 s/);
    assert.match(event.description, /after 5s, 5m/);
    assert.match(event.description, /3 attempts/);
  });
});
