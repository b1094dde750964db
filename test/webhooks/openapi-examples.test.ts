/**
 * The OpenAPI document's examples of webhook requests are requests the service accepts, today and later: each
 * request body example, and a body made of its schema's property examples, sent as a client copying them would.
 * (A recovery's `since` of 2026-01-01 was refused once older than WEBHOOK_RETENTION_DAYS.)
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, createHarness, json, type Harness } from '../support/harness.js';
import { subscribeWebhook } from './subscribe.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- a parsed JSON document

function resolve(schema: Json, doc: Json): Json {
  if (typeof schema.$ref !== 'string') return schema;
  return resolve(
    schema.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((node: Json, key: string) => node[key], doc),
    doc,
  );
}

/** The body examples of one operation: the media type's, and one of its schema's property examples. */
function examplesOf(content: Json, doc: Json): { where: string; body: unknown }[] {
  const found: { where: string; body: unknown }[] = [];
  if (content.example !== undefined) found.push({ where: 'example', body: content.example });
  for (const [name, entry] of Object.entries<Json>(content.examples ?? {}))
    found.push({ where: `examples.${name}`, body: entry.value });
  const schema = resolve(content.schema ?? {}, doc);
  const properties = Object.entries<Json>(schema.properties ?? {}).filter(([, p]) => p.example !== undefined);
  if (properties.length > 0)
    found.push({
      where: 'property examples',
      body: Object.fromEntries(properties.map(([name, property]) => [name, property.example])),
    });
  return found;
}

describe("the OpenAPI document's webhook request examples", () => {
  let h: Harness;
  before(async () => {
    h = await createHarness({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_POLL_INTERVAL_MS: '60000' } });
  });
  after(() => h.close());

  it('are accepted by the service', async () => {
    const doc = (await h.request({ method: 'GET', url: '/openapi.json' })).json<Json>();
    let sent = 0;
    for (const [path, item] of Object.entries<Json>(doc.paths)) {
      if (!path.startsWith('/webhooks')) continue;
      for (const [method, operation] of Object.entries<Json>(item)) {
        const content: Json | undefined = operation.requestBody?.content?.['application/json'];
        if (content === undefined) continue;
        for (const { where, body } of examplesOf(content, doc)) {
          // A subscription of its own for each, so one example's change (a rotation, a new url) leaves the next alone.
          const { id } = await subscribeWebhook(h, { url: 'http://127.0.0.1:9/hook' });
          const response = await h.request({
            method: method.toUpperCase() as 'POST',
            url: path.replace('{id}', id),
            headers: { ...json, ...bearer(h.tokens.admin) },
            payload: JSON.stringify(body),
          });
          assert.ok(
            response.statusCode < 300,
            `${method.toUpperCase()} ${path}, ${where} ${JSON.stringify(body)}: ${response.statusCode} ${response.body}`,
          );
          sent += 1;
        }
      }
    }
    // POST /webhooks, PATCH /webhooks/{id} and rotate-secret have examples; the test found them.
    assert.ok(sent >= 4, `${sent} examples sent`);
  });
});
