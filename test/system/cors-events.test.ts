/** CORS lets a browser client send what the typed client sends, Last-Event-ID (resuming /events) included. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createHarness, type Harness } from '../support/harness.js';

const ORIGIN = 'http://app.example:3000';

describe('CORS for the change stream', () => {
  let h: Harness;
  before(async () => {
    h = await createHarness({ env: { CORS_ORIGINS: ORIGIN } });
  });
  after(() => h.close());

  it('a preflight for GET /events with Authorization and Last-Event-ID is allowed', async () => {
    const preflight = await h.request({
      method: 'OPTIONS',
      url: '/events',
      headers: {
        origin: ORIGIN,
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization, last-event-id',
      },
    });
    assert.equal(preflight.statusCode, 204);
    assert.equal(preflight.headers['access-control-allow-origin'], ORIGIN);
    const allowed = String(preflight.headers['access-control-allow-headers'])
      .split(',')
      .map((name) => name.trim().toLowerCase());
    assert.ok(allowed.includes('last-event-id'), allowed.join(', '));
    assert.ok(allowed.includes('authorization'), allowed.join(', '));
  });
});
