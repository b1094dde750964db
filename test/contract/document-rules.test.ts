/**
 * The OpenAPI document states the rules the service enforces, in a form any JSON Schema validator reads alike:
 * text patterns without surrogate ranges, Last-Event-ID with the pattern of `after`, the `q` rule in its
 * description, and the catalogue naming the code each input gets.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { assertError } from '../support/assertions.js';
import { bearer, createHarness, json, type Harness } from '../support/harness.js';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- a parsed JSON document

/** Every `pattern` in the document, with where it is. */
function patternsOf(node: unknown, where = '#', found: [string, string][] = []): [string, string][] {
  if (Array.isArray(node)) node.forEach((item, i) => patternsOf(item, `${where}/${i}`, found));
  else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'pattern' && typeof value === 'string') found.push([where, value]);
      else patternsOf(value, `${where}/${key}`, found);
    }
  }
  return found;
}

describe('the document states the enforced rules', () => {
  let h: Harness;
  let doc: Doc;
  before(async () => {
    h = await createHarness();
    doc = (await h.request({ method: 'GET', url: '/openapi.json' })).json();
  });
  after(() => h.close());

  it('every pattern reads the same with and without the u flag: an emoji passes, a control character does not', () => {
    const patterns = patternsOf(doc);
    assert.ok(patterns.length > 5);
    for (const [where, pattern] of patterns) {
      assert.doesNotMatch(pattern, /\\u[dD][89a-fA-F]/, `${where} names a surrogate`);
      const plain = new RegExp(pattern);
      const unicode = new RegExp(pattern, 'u');
      for (const text of ['Monstera 😍', 'Café', 'abc', '0', 'whk_1']) {
        assert.equal(plain.test(text), unicode.test(text), `${where}: ${pattern} on ${text}`);
      }
    }
    const name = new RegExp(doc.components.schemas.NewPlant.properties.name.pattern);
    assert.ok(name.test('Monstera 😍'));
    assert.ok(!name.test('a\u0001b'));
  });

  it('an unpaired surrogate is still refused, and said so in the schema', async () => {
    assert.match(doc.components.schemas.NewPlant.properties.name.description, /unpaired surrogates/);
    const response = await h.request({
      method: 'POST',
      url: '/plants',
      headers: { ...json, ...bearer(h.tokens.write) },
      payload: '{"id": 1, "name": "a\\ud800"}',
    });
    assertError(response, Errors.INVALID_FIELD, 'name must not contain unpaired surrogates');
    const paired = await h.request({
      method: 'POST',
      url: '/plants',
      headers: { ...json, ...bearer(h.tokens.write) },
      payload: '{"id": 2, "name": "a\\ud83d\\ude0d"}',
    });
    assert.equal(paired.statusCode, 200);
  });

  it('Last-Event-ID carries the pattern of after, and its 400 is catalogued for headers', async () => {
    const operation = doc.paths['/events'].get;
    const header = operation.parameters.find((p: Doc) => p.in === 'header' && p.name === 'last-event-id');
    const afterParameter = operation.parameters.find((p: Doc) => p.in === 'query' && p.name === 'after');
    assert.equal(header.schema.pattern, afterParameter.schema.pattern);
    for (const id of ['00', 'abc', '18446744073709551615']) {
      assert.ok(!new RegExp(header.schema.pattern).test(id), id);
      const response = await h.request({
        method: 'GET',
        url: '/events',
        headers: { ...bearer(h.tokens.read), 'last-event-id': id },
      });
      assertError(response, Errors.INVALID_PARAMETER, 'Last-Event-ID must be an event id');
    }
    const entry = doc['x-error-catalogue'].find((e: Doc) => e.error === Errors.INVALID_PARAMETER.code);
    assert.match(entry.meaning, /header/);
  });

  it("q's rule of at least one letter or digit is in its description, on both operations", async () => {
    for (const path of ['/plants', '/plants/export']) {
      const q = doc.paths[path].get.parameters.find((p: Doc) => p.name === 'q');
      assert.match(q.description, /at least one letter or digit/, path);
      for (const text of ['-', '¡', '😍']) {
        assert.ok(new RegExp(q.schema.pattern).test(text), `${path}: the pattern admits ${text}`);
        const response = await h.request({
          method: 'GET',
          url: `${path}?q=${encodeURIComponent(text)}`,
          headers: bearer(h.tokens.read),
        });
        assertError(response, Errors.INVALID_PARAMETER, 'q must contain at least one letter or digit');
      }
    }
  });

  it('rules a schema cannot say are in the description of what they rule', () => {
    const list = doc.paths['/plants'].get.parameters;
    const param = (name: string) => list.find((p: Doc) => p.name === name).description as string;
    assert.match(param('after'), /sort=id/);
    assert.match(param('after'), /400/);
    assert.match(param('cursor'), /after/);
    const { PlantPatch, PlantReplacement } = doc.components.schemas;
    for (const schema of [PlantPatch, PlantReplacement]) assert.match(schema.properties.id.description, /path.*400/);
  });

  it('headers always sent are marked required: ETag, WWW-Authenticate, Retry-After, Allow, Accept-Patch', () => {
    const plant = doc.paths['/plants/{id}'];
    for (const [operation, status] of [
      [plant.get, '200'],
      [plant.get, '304'],
      [plant.put, '200'],
      [plant.patch, '200'],
      [doc.paths['/plants'].post, '200'],
    ])
      assert.equal(operation.responses[status].headers.ETag.required, true, status);
    for (const [path, item] of Object.entries<Doc>(doc.paths)) {
      for (const [method, operation] of Object.entries<Doc>(item)) {
        const responses = operation.responses as Doc;
        if (responses['401']) assert.equal(responses['401'].headers['WWW-Authenticate'].required, true, path);
        for (const status of ['429', '503'])
          if (responses[status]) assert.equal(responses[status].headers['Retry-After'].required, true, path);
        if (method === 'patch') assert.equal(responses['415'].headers['Accept-Patch'].required, true, path);
      }
    }
  });

  it('an import body shows one line of each format as a schema', () => {
    const content = doc.paths['/plants/import'].post.requestBody.content;
    assert.equal(content['application/x-ndjson']['x-itemSchema'].$ref, '#/components/schemas/NewPlant');
    assert.deepEqual(content['text/csv']['x-itemSchema'].required, ['id', 'name']);
    assert.match(content['text/csv'].schema.description, /header/);
  });
});
