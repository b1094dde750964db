/**
 * POST /webhooks/{id}/rotate-secret over HTTP, on every store: the new secret shown
 * once, the overlap it answers, body validation, 404, scopes, the OpenAPI entry, and
 * that no secret is ever listed, read or logged.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { assertError } from '../support/assertions.js';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, json, type Harness } from '../support/harness.js';
import { selectColumn } from './database.js';
import { subscribeWebhook } from './subscribe.js';

interface Rotated {
  id: string;
  url: string;
  createdAt: string;
  secret: string;
  previousSecretExpiresAt?: string;
}

const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

for (const backend of testBackends())
  describe(`rotating a webhook secret over HTTP [${backend.name}]`, () => {
    let h: Harness;
    before(async () => {
      h = await createHarness({ backend });
    });
    after(() => h.close());

    const subscribe = () => subscribeWebhook(h, { url: 'https://93.184.216.34/hooks', description: 'inventory sync' });
    /** `payload` undefined: no body and no Content-Type at all. */
    const rotate = (id: string, payload?: string, token = h.tokens.admin) =>
      h.request({
        method: 'POST',
        url: `/webhooks/${id}/rotate-secret`,
        headers: payload === undefined ? bearer(token) : { ...json, ...bearer(token) },
        ...(payload === undefined ? {} : { payload }),
      });
    const hoursFromNow = (iso: string | undefined) => (Date.parse(iso ?? '') - Date.now()) / 3_600_000;

    it('answers 200 with the subscription and a new secret; the previous one lasts 24 h by default', async () => {
      const { id, secret: original } = await subscribe();
      const response = await rotate(id);
      assert.equal(response.statusCode, 200, response.body);
      const body = response.json() as Rotated;
      assert.deepEqual(Object.keys(body).sort(), [
        'createdAt',
        'description',
        'enabled',
        'eventTypes',
        'id',
        'previousSecretExpiresAt',
        'secret',
        'url',
      ]);
      assert.equal(body.id, id);
      assert.equal(body.url, 'https://93.184.216.34/hooks');
      assert.match(body.secret, SECRET);
      assert.notEqual(body.secret, original);
      assert.ok(Math.abs(hoursFromNow(body.previousSecretExpiresAt) - 24) < 0.1, body.previousSecretExpiresAt);

      const nullBody = (await rotate(id, 'null')).json() as Rotated;
      assert.ok(
        Math.abs(hoursFromNow(nullBody.previousSecretExpiresAt) - 24) < 0.1,
        'a null body means the defaults too',
      );
      const emptyObject = (await rotate(id, '{"ignored": true}')).json() as Rotated;
      assert.ok(Math.abs(hoursFromNow(emptyObject.previousSecretExpiresAt) - 24) < 0.1);
      assert.equal(
        new Set([original, body.secret, nullBody.secret, emptyObject.secret]).size,
        4,
        'a fresh secret each time',
      );
    });

    it('takes overlapSeconds from 0 (no previous secret: no expiry shown) to 7 days', async () => {
      const { id } = await subscribe();
      const hour = (await rotate(id, '{"overlapSeconds": 3600}')).json() as Rotated;
      assert.ok(Math.abs(hoursFromNow(hour.previousSecretExpiresAt) - 1) < 0.1, hour.previousSecretExpiresAt);
      const week = (await rotate(id, '{"overlapSeconds": 604800}')).json() as Rotated;
      assert.ok(Math.abs(hoursFromNow(week.previousSecretExpiresAt) - 168) < 0.1, week.previousSecretExpiresAt);
      const none = await rotate(id, '{"overlapSeconds": 0}');
      assert.equal(none.statusCode, 200, none.body);
      assert.equal((none.json() as Rotated).previousSecretExpiresAt, undefined);
      assert.match((none.json() as Rotated).secret, SECRET);
    });

    it('never lists, reads or logs any secret, old or new', async () => {
      const { id, secret: original } = await subscribe();
      const rotated = (await rotate(id, '{"overlapSeconds": 60}')).json() as Rotated;
      const shown = [
        (await h.request({ method: 'GET', url: '/webhooks', headers: bearer(h.tokens.admin) })).body,
        (await h.request({ method: 'GET', url: `/webhooks/${id}`, headers: bearer(h.tokens.admin) })).body,
        (await h.request({ method: 'GET', url: `/webhooks/${id}/deliveries`, headers: bearer(h.tokens.admin) })).body,
        h.logs(),
      ].join('\n');
      assert.ok(shown.includes(id), 'the subscription was listed');
      for (const secret of [original, rotated.secret])
        assert.ok(!shown.includes(secret.slice('whsec_'.length, 30)), 'a secret is shown');
    });

    it('answers 404 WEBHOOK_NOT_FOUND for an unknown subscription', async () => {
      assertError(await rotate('whk_nobody'), Errors.WEBHOOK_NOT_FOUND, 'whk_nobody');
      assertError(await rotate('whk_nobody', '{"overlapSeconds": 60}'), Errors.WEBHOOK_NOT_FOUND);
    });

    it('refuses a bad body with the usual 400 Error records, rotating nothing', async () => {
      const { id, secret } = await subscribe();
      for (const bad of ['-1', '604801', '1.5', '"60"', 'true', '99999999999999999999']) {
        assertError(await rotate(id, `{"overlapSeconds": ${bad}}`), Errors.INVALID_FIELD, 'overlapSeconds');
      }
      assertError(await rotate(id, '[]'), Errors.BODY_NOT_OBJECT);
      assertError(await rotate(id, '60'), Errors.BODY_NOT_OBJECT);
      assertError(await rotate(id, '{"overlapSeconds": '), Errors.INVALID_JSON);
      const stored = await selectColumn(
        h.databaseUrl,
        `SELECT secret || ' ' || coalesce(previous_secret, '-') FROM webhook_subscriptions WHERE id = '${id}'`,
      );
      assert.deepEqual(stored, [`${secret} -`], 'nothing was rotated');
      // An empty JSON body is no body, and the body is optional: the defaults apply.
      assert.equal((await rotate(id, '')).statusCode, 200);
    });

    it('needs the admin scope', async () => {
      const { id } = await subscribe();
      assertError(await rotate(id, undefined, h.tokens.write), Errors.INSUFFICIENT_SCOPE, 'admin');
      assertError(await rotate(id, undefined, h.tokens.read), Errors.INSUFFICIENT_SCOPE);
      assertError(await h.request({ method: 'POST', url: `/webhooks/${id}/rotate-secret` }), Errors.TOKEN_MISSING);
      assertError(await rotate(id, undefined, `pst_${'Z'.repeat(43)}`), Errors.TOKEN_INVALID);
      assert.equal((await rotate(id, undefined, h.tokens.all)).statusCode, 200);
    });
  });

describe('the OpenAPI document: rotate-secret', () => {
  it('is an admin operation answering 200 with the new secret, its optional body and its errors', async () => {
    const h = await createHarness();
    try {
      const doc = (await h.request({ method: 'GET', url: '/openapi.json' })).json() as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- a parsed JSON document
      const operation = doc.paths['/webhooks/{id}/rotate-secret']?.post;
      assert.ok(operation);
      assert.equal(operation.operationId, 'rotateWebhookSecret');
      assert.deepEqual(operation.security, [{ bearerAuth: ['admin'] }]);
      assert.equal(
        operation.responses['200'].content['application/json'].schema.$ref,
        '#/components/schemas/RotatedWebhookSubscription',
      );
      assert.equal(
        operation.requestBody.content['application/json'].schema.$ref,
        '#/components/schemas/RotateWebhookSecret',
      );
      assert.ok(operation.responses['404'].description.includes('WEBHOOK_NOT_FOUND'));
      assert.ok(operation.responses['400'].description.includes('INVALID_FIELD'));
      assert.ok(operation.responses['401'] && operation.responses['403']);
      const overlap = doc.components.schemas.RotateWebhookSecret.properties.overlapSeconds;
      assert.deepEqual([overlap.type, overlap.minimum, overlap.maximum], ['integer', 0, 604_800]);
      assert.match(overlap.description, /default 86400 \(24 h\)/);
      assert.match(doc.webhooks['plant.created'].post.description, /two signatures/);
    } finally {
      await h.close();
    }
  });
});
