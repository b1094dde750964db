/** Subscribing over HTTP as most webhook tests do: POST /webhooks with the admin token. */
import assert from 'node:assert/strict';
import type { components } from '../../packages/client/src/openapi-types.js';
import { bearer, json, type Harness } from '../support/harness.js';

export type CreatedSubscription = components['schemas']['CreatedWebhookSubscription'];

/** POST /webhooks as admin: asserts 201 and answers the subscription, with its signing secret. */
export async function subscribeWebhook(h: Harness, body: object): Promise<CreatedSubscription> {
  const response = await h.request({
    method: 'POST',
    url: '/webhooks',
    headers: { ...json, ...bearer(h.tokens.admin) },
    payload: JSON.stringify(body),
  });
  assert.equal(response.statusCode, 201, response.body);
  return response.json<CreatedSubscription>();
}
