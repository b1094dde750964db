/**
 * Signing during a rotation's overlap: one v1 signature per secret, new first, each
 * checked with the Standard Webhooks reference library as a receiver would.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { webhookHeaders } from '../../src/webhooks/signing.js';
import { generateSigningSecret } from '../../src/webhooks/subscriptions.js';

const payload = '{"id":9223372036854775807,"name":"Max"}';
const verifies = (secret: string, headers: Record<string, string>) => {
  try {
    new Webhook(secret).verify(payload, headers, { jsonParse: false });
    return true;
  } catch {
    return false;
  }
};

describe('webhook-signature during a secret rotation', () => {
  const current = generateSigningSecret();
  const previous = generateSigningSecret();
  const message = { secret: current, eventId: 'msg_2bVq3v0oZ8yKkq7m9L1c4Q', eventType: 'plant.created', payload };

  it('carries one signature per secret, space-separated, the new secret first; either verifies', () => {
    const headers = webhookHeaders({ ...message, previousSecret: previous }, new Date());
    const signatures = headers['webhook-signature']?.split(' ') ?? [];
    assert.equal(signatures.length, 2, headers['webhook-signature']);
    for (const signature of signatures) assert.match(signature, /^v1,[A-Za-z0-9+/]{43}=$/);
    assert.ok(verifies(current, headers), 'the new secret');
    assert.ok(verifies(previous, headers), 'the previous secret');
    assert.ok(!verifies(generateSigningSecret(), headers), 'some other secret');
    // New first: the first signature alone is the new secret's.
    assert.ok(verifies(current, { ...headers, 'webhook-signature': signatures[0] as string }));
    assert.ok(!verifies(previous, { ...headers, 'webhook-signature': signatures[0] as string }));
  });

  it('carries a single signature when there is no previous secret', () => {
    const headers = webhookHeaders(message, new Date());
    assert.match(headers['webhook-signature'] ?? '', /^v1,[A-Za-z0-9+/]{43}=$/);
    assert.ok(verifies(current, headers));
    assert.ok(!verifies(previous, headers));
  });
});
