/** The small pieces: the retry schedule, the exact payload, the signature headers, the config. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { plantCreatedEvent } from '../../src/domain/events.js';
import { plantJson } from '../../src/domain/plant-json.js';
import { formatDelay } from '../../src/webhooks/openapi.js';
import { DEFAULT_RETRY_SCHEDULE, parseRetrySchedule } from '../../src/config/retry-schedule.js';
import { nextAttemptDelay } from '../../src/webhooks/retry-schedule.js';
import { webhookHeaders } from '../../src/webhooks/signing.js';
import { generateSigningSecret } from '../../src/webhooks/subscriptions.js';

describe('the retry schedule', () => {
  it('defaults to about a day: 5s, 5m, 30m, 2h, 5h, 10h, 10h', () => {
    const schedule = parseRetrySchedule(DEFAULT_RETRY_SCHEDULE);
    assert.deepEqual(schedule.map(formatDelay), ['5s', '5m', '30m', '2h', '5h', '10h', '10h']);
    const hours = schedule.reduce((a, b) => a + b, 0) / 3_600_000;
    assert.ok(hours > 24 && hours < 30, `${hours} h`);
  });

  it('parses units and refuses anything else, saying what it expects', () => {
    assert.deepEqual(parseRetrySchedule('250ms, 1s,2m,1h,1d'), [250, 1000, 120_000, 3_600_000, 86_400_000]);
    assert.deepEqual(parseRetrySchedule('none'), []);
    for (const bad of ['', '5', '5x', '1s,,2s', '-1s', '8d', '1.5s'])
      assert.throws(() => parseRetrySchedule(bad), /unit/, bad);
  });

  it('jitters each delay by at most 20%, and ends after the last one', () => {
    const schedule = [1000, 60_000];
    assert.equal(
      nextAttemptDelay(schedule, 1, () => 0),
      800,
    );
    assert.equal(
      nextAttemptDelay(schedule, 1, () => 0.999999),
      1200,
    );
    assert.equal(
      nextAttemptDelay(schedule, 2, () => 0.5),
      60_000,
    );
    assert.equal(nextAttemptDelay(schedule, 3), undefined);
    for (let i = 0; i < 100; i += 1) {
      const delay = nextAttemptDelay(schedule, 1) as number;
      assert.ok(delay >= 800 && delay <= 1200, String(delay));
    }
  });

  it('is read from WEBHOOK_RETRY_SCHEDULE, with the other WEBHOOK_* settings', () => {
    const config = loadConfig({
      WEBHOOK_RETRY_SCHEDULE: '1s,2s',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_TIMEOUT_MS: '2500',
    });
    assert.deepEqual(config.webhookRetrySchedule, [1000, 2000]);
    assert.equal(config.webhookAllowPrivateUrls, true);
    assert.equal(config.webhookTimeoutMs, 2500);
    const defaults = loadConfig({});
    assert.equal(defaults.webhookAllowPrivateUrls, false);
    assert.equal(defaults.webhookTimeoutMs, 10_000);
    assert.equal(defaults.webhookRetrySchedule.length, 7);
    assert.throws(
      () => loadConfig({ WEBHOOK_RETRY_SCHEDULE: '5 minutes' }),
      (e: unknown) => e instanceof ConfigError && /WEBHOOK_RETRY_SCHEDULE/.test(e.message),
    );
    assert.throws(
      () => loadConfig({ WEBHOOK_ALLOW_PRIVATE_URLS: 'yes' }),
      /WEBHOOK_ALLOW_PRIVATE_URLS must be true or false/,
    );
  });
});

describe('the plant.created payload', () => {
  it('is the NewPlant JSON with every digit of the id', () => {
    assert.equal(plantJson({ id: 9223372036854775807n, name: 'Max' }), '{"id":9223372036854775807,"name":"Max"}');
    assert.equal(
      plantJson({ id: -9223372036854775808n, name: 'Min', tag: 't' }),
      '{"id":-9223372036854775808,"name":"Min","tag":"t"}',
    );
    assert.equal(
      plantJson({ id: 0n, name: 'quote " backslash \\ ü 🌵' }),
      '{"id":0,"name":"quote \\" backslash \\\\ ü 🌵"}',
    );
    const event = plantCreatedEvent({ id: 9007199254740993n, name: 'n' });
    assert.equal(event.type, 'plant.created');
    assert.match(event.id, /^msg_[A-Za-z0-9_-]{22}$/);
    assert.notEqual(plantCreatedEvent({ id: 1n, name: 'n' }).id, event.id);
  });
});

describe('the signature headers', () => {
  it('verify with the standardwebhooks library, and with no other secret', () => {
    const secret = generateSigningSecret();
    const payload = '{"id":9223372036854775807,"name":"Max"}';
    const headers = webhookHeaders({ secret, eventId: 'msg_test', eventType: 'plant.created', payload }, new Date());
    assert.equal(headers['webhook-id'], 'msg_test');
    assert.equal(headers['webhook-event-type'], 'plant.created');
    assert.equal(headers['content-type'], 'application/json');
    new Webhook(secret).verify(payload, headers, { jsonParse: false });
    assert.throws(() => new Webhook(generateSigningSecret()).verify(payload, headers), /signature/i);
    assert.throws(() => new Webhook(secret).verify(payload.replace('Max', 'Min'), headers), /signature/i);
  });
});
