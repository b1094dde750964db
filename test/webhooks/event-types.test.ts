/** GET /webhooks/event-types: every type a subscription can choose, matching the OpenAPI `webhooks` section. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EVENT_TYPES } from '../../src/domain/events.js';
import { Errors } from '../../src/http/errors.js';
import { assertError } from '../support/assertions.js';
import { bearer, createHarness, type Harness } from '../support/harness.js';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- a parsed JSON document

describe('the webhook event-type catalogue', () => {
  let h: Harness;
  before(async () => {
    h = await createHarness();
  });
  after(() => h.close());

  it('lists each event type with its description and body schema, as the OpenAPI document does', async () => {
    const response = await h.request({ method: 'GET', url: '/webhooks/event-types', headers: bearer(h.tokens.admin) });
    assert.equal(response.statusCode, 200, response.body);
    const catalogue = response.json() as { type: string; summary: string; description: string; schema: Doc }[];
    assert.deepEqual(
      catalogue.map((e) => e.type),
      [...EVENT_TYPES],
    );
    const doc = (await h.request({ method: 'GET', url: '/openapi.json' })).json() as Doc;
    assert.deepEqual(Object.keys(doc.webhooks).sort(), [...EVENT_TYPES].sort());
    for (const entry of catalogue) {
      const event = doc.webhooks[entry.type].post;
      assert.equal(entry.summary, event.summary);
      const ref = event.requestBody.content['application/json'].schema.$ref as string;
      const documented = doc.components.schemas[ref.replace('#/components/schemas/', '')];
      assert.deepEqual(entry.schema.properties, documented.properties, entry.type);
      assert.deepEqual(entry.schema.required, documented.required, entry.type);
      assert.ok(entry.description.length > 20);
    }
    assertError(
      await h.request({ method: 'GET', url: '/webhooks/event-types', headers: bearer(h.tokens.read) }),
      Errors.INSUFFICIENT_SCOPE,
    );
  });
});
