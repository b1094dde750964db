import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { createHarness, type Harness } from '../support/harness.js';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- a parsed JSON document

describe('GET /openapi.json', () => {
  let h: Harness;
  let doc: Doc;
  before(async () => {
    h = await createHarness();
    const response = await h.request({ method: 'GET', url: '/openapi.json' });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^application\/json/);
    doc = response.json();
  });
  after(() => h.close());

  it('is OpenAPI 3.1, version 1.0.0, MIT', () => {
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.version, '1.0.0');
    assert.equal(doc.info.license.name, 'MIT');
  });

  it("keeps the seed's shapes: NewPlant, Plant, Error and bearerAuth", () => {
    const { NewPlant, Plant, Error } = doc.components.schemas;
    assert.deepEqual(NewPlant.required, ['id', 'name']);
    assert.deepEqual(Object.keys(NewPlant.properties), ['id', 'name', 'tag']);
    assert.equal(NewPlant.properties.id.type, 'integer');
    assert.equal(NewPlant.properties.id.format, 'int64');
    assert.deepEqual(Plant.required, ['name']);
    assert.deepEqual(Object.keys(Plant.properties), ['name', 'tag']);
    assert.deepEqual(Error.required, ['error', 'message']);
    assert.equal(Error.properties.error.format, 'int32');
    assert.deepEqual(doc.components.securitySchemes.bearerAuth, {
      ...doc.components.securitySchemes.bearerAuth,
      type: 'http',
      scheme: 'bearer',
    });
  });

  it('documents the length limits as maxLength', () => {
    const { NewPlant } = doc.components.schemas;
    assert.equal(NewPlant.properties.name.maxLength, 200);
    assert.equal(NewPlant.properties.tag.maxLength, 100);
  });

  it('documents every status POST /plants can answer, each failure with the Error schema', () => {
    const responses = doc.paths['/plants'].post.responses;
    assert.deepEqual(Object.keys(responses).sort(), [
      '200',
      '400',
      '401',
      '403',
      '408',
      '409',
      '412',
      '413',
      '415',
      '429',
      '431',
      '500',
      '503',
    ]);
    assert.equal(responses['200'].content['application/json'].schema.$ref, '#/components/schemas/Plant');
    assert.ok(responses['200'].headers.ETag);
    for (const status of ['400', '401', '403', '408', '409', '412', '413', '415', '429', '431', '500', '503']) {
      assert.equal(responses[status].content['application/json'].schema.$ref, '#/components/schemas/Error', status);
    }
    assert.ok(responses['401'].headers['WWW-Authenticate']);
    assert.deepEqual(doc.paths['/plants'].post.security, [{ bearerAuth: ['plants:write'] }]);
  });

  it('lists the whole error catalogue, code by code', () => {
    const listed = doc['x-error-catalogue'] as { error: number; status: number; name: string }[];
    for (const [name, entry] of Object.entries(Errors)) {
      assert.ok(
        listed.some((e) => e.error === entry.code && e.status === entry.status && e.name === name),
        name,
      );
      assert.ok(doc.info.description.includes(`| ${entry.code} | ${entry.status} | ${name} |`), name);
    }
    assert.deepEqual(
      doc.components.schemas.Error.properties.error.enum,
      Object.values(Errors).map((e) => e.code),
    );
  });

  it('documents the rest of the resource and the service endpoints', () => {
    assert.ok(doc.paths['/plants'].get);
    assert.ok(doc.paths['/plants/{id}'].get);
    assert.ok(doc.paths['/plants/{id}'].delete);
    assert.deepEqual(doc.paths['/healthz'].get.security, []);
    assert.equal(doc.paths['/plants/{id}'].delete.responses['204'].content, undefined);
  });

  it('marks a body required except where the operation accepts none (rotating a webhook secret)', () => {
    assert.equal(doc.paths['/plants'].post.requestBody.required, true);
    assert.equal(doc.paths['/webhooks'].post.requestBody.required, true);
    assert.equal(doc.paths['/webhooks/{id}/rotate-secret'].post.requestBody.required, false);
  });
});
