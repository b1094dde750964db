/** The response check the harness runs on every response: it must refuse what the document does not allow. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ContractCheck, type SeenResponse } from '../support/contract-check.js';
import { createHarness, type Harness } from '../support/harness.js';

describe('the response check', () => {
  let h: Harness;
  let check: ContractCheck;
  before(async () => {
    h = await createHarness();
    check = ContractCheck.of(h.app);
  });
  after(() => h.close());

  const json = { 'content-type': 'application/json; charset=utf-8', etag: '"1"', 'cache-control': 'no-store' };
  const plant: SeenResponse = {
    method: 'GET',
    url: '/plants/1',
    status: 200,
    headers: json,
    body: '{"id":1,"name":"a"}',
  };

  it('passes a documented response', () => {
    assert.deepEqual(check.problems(plant), []);
    assert.deepEqual(check.problems({ ...plant, url: '/plants/1?x=1', method: 'HEAD', body: '' }), []);
  });

  it('refuses an undocumented status, a missing required header, a body off its schema, a wrong media type', () => {
    assert.match(check.problems({ ...plant, status: 418 }).join(), /418 is not documented/);
    assert.match(
      check.problems({ ...plant, headers: { 'content-type': 'application/json' } }).join(),
      /ETag is missing/,
    );
    assert.match(check.problems({ ...plant, body: '{"id":1}' }).join(), /does not match its schema/);
    assert.match(check.problems({ ...plant, body: '{"id":1,"name":"a","version":2}' }).join(), /does not match/);
    assert.match(check.problems({ ...plant, headers: { ...json, 'content-type': 'text/plain' } }).join(), /not one of/);
    const unauthorized = { ...plant, status: 401, headers: { ...json, etag: undefined } };
    assert.match(check.problems({ ...unauthorized, body: '{"error":40101,"message":"x"}' }).join(), /WWW-Authenticate/);
    assert.match(check.problems({ ...unauthorized, body: '{"error":1,"message":"x"}' }).join(), /schema/);
  });

  it('refuses a 304 or 204 with a body or a Content-Length', () => {
    const notModified = { ...plant, status: 304, headers: { ...json, 'content-length': '4' }, body: 'null' };
    assert.match(check.problems(notModified).join(), /has a body/);
    assert.match(check.problems(notModified).join(), /Content-Length/);
  });

  it('checks failures outside any operation as Error records', () => {
    const notFound = { method: 'GET', url: '/nowhere', status: 404, headers: { 'content-type': 'application/json' } };
    assert.deepEqual(check.problems({ ...notFound, body: '{"error":40401,"message":"no"}' }), []);
    assert.match(check.problems({ ...notFound, body: '{"message":"no"}' }).join(), /schema/);
  });
});
