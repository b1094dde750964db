/**
 * The served OpenAPI document states a webhook URL's rule (pattern, maxLength) so that what its schema accepts the
 * service accepts, but for the SSRF policy (where the host resolves), which the description states. A url of 400
 * zeros passed the schema and was refused by a rule the schema did not state. URLs drawn from the document's own
 * pattern are accepted (by the service's syntax check, and over HTTP); URLs the service refuses fail the schema.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { Errors } from '../../src/http/errors.js';
import { parseWebhookUrl } from '../../src/webhooks/url-policy.js';
import { assertError } from '../support/assertions.js';
import { bearer, createHarness, json, type Harness } from '../support/harness.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- a parsed JSON document

/** Refused by the service before any DNS look-up. */
const REFUSED = [
  '0'.repeat(400),
  'not-a-url',
  'ftp://example.com/',
  'https://user:pw@example.com/',
  'https://example.com/#part',
  'https://example.com:0/',
  'https://example.com:65536/',
  'https://1.2.3.999/',
  'https://example.123/',
  'https://[1::2::3]/',
  'https://example.com/a b',
  `https://example.com/${'a'.repeat(2048)}`,
];

describe('the webhook url in the OpenAPI document', () => {
  let h: Harness;
  let doc: Json;
  before(async () => {
    h = await createHarness({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_POLL_INTERVAL_MS: '60000' } });
    doc = (await h.request({ method: 'GET', url: '/openapi.json' })).json<Json>();
  });
  after(() => h.close());

  const schemas = () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    return (['NewWebhookSubscription', 'WebhookSubscriptionPatch'] as const).map((name) => {
      const url = doc.components.schemas[name].properties.url as Json;
      return { name, url, valid: ajv.compile(url) };
    });
  };

  it('states the rule: a url the service refuses fails the schema, with an INVALID_WEBHOOK_URL saying why', async () => {
    for (const { name, url, valid } of schemas()) {
      assert.equal(typeof url.pattern, 'string', `${name}.url has a pattern`);
      assert.equal(url.maxLength, 2048);
      assert.match(String(url.description), /WEBHOOK_ALLOW_PRIVATE_URLS/, 'the SSRF policy is described');
      for (const refused of REFUSED) {
        assert.throws(() => parseWebhookUrl(refused), `the service refuses ${refused.slice(0, 60)}`);
        assert.equal(valid(refused), false, `${name}.url accepts ${refused.slice(0, 60)}`);
      }
    }
    const response = await h.request({
      method: 'POST',
      url: '/webhooks',
      headers: { ...json, ...bearer(h.tokens.admin) },
      payload: JSON.stringify({ url: '0'.repeat(400) }),
    });
    assertError(response, Errors.INVALID_WEBHOOK_URL, 'absolute http or https URL');
  });

  it('accepts only what the service accepts: URLs drawn from the pattern pass its syntax check and POST /webhooks', async () => {
    const [create] = schemas();
    assert.ok(create !== undefined);
    const drawn = fc.stringMatching(new RegExp(create.url.pattern as string, 'u')).filter((url) => url.length <= 2048);
    fc.assert(
      fc.property(drawn, (url) => {
        assert.equal(create.valid(url), true);
        parseWebhookUrl(url);
      }),
      { numRuns: 3000, seed: 20261208 },
    );
    // Some through the service itself (the SSRF policy lifted: no DNS here).
    for (const url of fc.sample(drawn, { numRuns: 25, seed: 47 })) {
      const response = await h.request({
        method: 'POST',
        url: '/webhooks',
        headers: { ...json, ...bearer(h.tokens.admin) },
        payload: JSON.stringify({ url }),
      });
      assert.equal(response.statusCode, 201, `${JSON.stringify(url)}: ${response.body}`);
    }
  });
});
