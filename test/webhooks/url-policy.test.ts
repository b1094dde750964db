import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkWebhookUrl, isPublicAddress, WebhookUrlError } from '../../src/webhooks/url-policy.js';

const strict = { allowPrivate: false };

describe('webhook URL policy (SSRF)', () => {
  it('classifies addresses', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      'fc00::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:10.0.0.1',
      '64:ff9b::10.0.0.1',
      '::127.0.0.1',
      '::7f00:1',
      '::10.0.0.1',
      '2002:7f00:1::',
      '2002:c0a8:101::1',
      '64:ff9b::7f00:1',
      '64:ff9b:1::8.8.8.8',
      '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    ]) {
      assert.equal(isPublicAddress(address), false, address);
    }
    for (const address of [
      '93.184.216.34',
      '8.8.8.8',
      '172.32.0.1',
      '2606:4700:4700::1111',
      '::ffff:8.8.8.8',
      '2002:808:808::1',
      '64:ff9b::8.8.8.8',
    ]) {
      assert.equal(isPublicAddress(address), true, address);
    }
  });

  it('refuses private, loopback and link-local destinations by default, by resolved address', async () => {
    const resolvesTo = (address: string) => async () => [{ address, family: address.includes(':') ? 6 : 4 }];
    await assert.rejects(checkWebhookUrl('http://127.0.0.1:9/hook', strict), /127\.0\.0\.1, a private/);
    await assert.rejects(checkWebhookUrl('http://[::1]/hook', strict), WebhookUrlError);
    await assert.rejects(checkWebhookUrl('http://169.254.169.254/latest/meta-data', strict), WebhookUrlError);
    await assert.rejects(
      checkWebhookUrl('https://innocent.example/hook', strict, resolvesTo('10.0.0.5')),
      /resolves to 10\.0\.0\.5/,
    );
    await assert.rejects(checkWebhookUrl('http://localhost:8080/', strict), WebhookUrlError);
    const ok = await checkWebhookUrl('https://hooks.example/ok', strict, resolvesTo('93.184.216.34'));
    assert.equal(ok.href, 'https://hooks.example/ok');
  });

  it('refuses other schemes, credentials and fragments whatever the policy', async () => {
    for (const url of [
      'ftp://example.com/',
      'file:///etc/passwd',
      'gopher://x',
      'http://user:pw@example.com/',
      'http://example.com/#x',
      'not a url',
      'http://example.com:0/',
    ]) {
      await assert.rejects(checkWebhookUrl(url, { allowPrivate: true }), WebhookUrlError, url);
    }
  });

  it('refuses spaces and control characters anywhere, even where new URL() would drop them (the CLI has no schema)', async () => {
    for (const url of [
      '\u0000http://example.com/',
      'http://example.com/\t',
      'http://example.com/a b',
      'http://example.com/a\u007fb',
      'http://example.com/\u0085',
    ]) {
      await assert.rejects(
        checkWebhookUrl(url, { allowPrivate: true }),
        /url must not contain spaces or control characters/,
        JSON.stringify(url),
      );
    }
  });

  it('WEBHOOK_ALLOW_PRIVATE_URLS lifts the address check', async () => {
    assert.equal((await checkWebhookUrl('http://127.0.0.1:9/hook', { allowPrivate: true })).port, '9');
  });
});
