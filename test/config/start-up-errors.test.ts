/**
 * Start-up errors from the configuration alone: each names the variable and what
 * it got, in one line, before anything is opened or bound.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/index.js';

const load = (env: Record<string, string>) => loadConfig({ DATABASE_URL: 'sqlite:/tmp/x.db', ...env });

function refused(env: Record<string, string>): string {
  try {
    load(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `a ConfigError, not ${String(error)}`);
    assert.ok(!error.message.includes('\n'), 'one line');
    return error.message;
  }
  assert.fail(`accepted ${JSON.stringify(env)}`);
}

describe('start-up errors that name what is wrong', () => {
  it('TRUST_PROXY that is not an address, a CIDR or a hop count', () => {
    for (const bad of ['abc', '999.1.1.1', '10.0.0.0/33', '::1/129', 'fe80::1::2', '10.0.0.1/']) {
      const message = refused({ TRUST_PROXY: bad });
      assert.match(
        message,
        /^TRUST_PROXY must be false, a number of proxy hops, or a comma-separated list of proxy addresses\/CIDRs/,
        bad,
      );
      assert.ok(message.includes(`'${bad}'`), message);
    }
    assert.deepEqual(load({ TRUST_PROXY: 'abc::1, 10.0.0.0/8, ::1/128, 2001:db8::/32' }).limits.trustProxy, [
      'abc::1',
      '10.0.0.0/8',
      '::1/128',
      '2001:db8::/32',
    ]);
  });

  it('HOST and METRICS_HOST that are neither an IP address nor a host name', () => {
    for (const name of ['HOST', 'METRICS_HOST']) {
      for (const bad of ['999.1.1.1', '1.2.3', '127.0.0.1:8080', 'http://example.com', 'a b', '-leading.example']) {
        const message = refused({ [name]: bad });
        assert.match(message, new RegExp(`^${name} must be an IP address .* or a host name`), bad);
        assert.ok(message.includes(`'${bad}'`), message);
      }
    }
    for (const good of ['127.0.0.1', '0.0.0.0', '::', '::1', 'localhost', 'api.example.com', 'host-1']) {
      assert.equal(load({ HOST: good }).host, good);
    }
  });

  it('a DATABASE_URL whose port is out of range names the variable and the port, never the password', () => {
    const message = refused({ DATABASE_URL: 'postgres://app:s3cret@127.0.0.1:99999/test' });
    assert.match(message, /^DATABASE_URL: port 99999 is out of range \(1 to 65535\)/);
    assert.ok(!message.includes('s3cret'), message);
    assert.equal(
      load({ DATABASE_URL: 'postgres://app:s3cret@127.0.0.1:5432/test' }).databaseUrl,
      'postgres://app:s3cret@127.0.0.1:5432/test',
    );
  });

  it('METRICS_PORT equal to PORT on the same address', () => {
    const message = refused({ PORT: '9100', METRICS_PORT: '9100' });
    assert.match(message, /^METRICS_PORT \(9100\) must differ from PORT \(9100\)/);
    assert.match(
      refused({ PORT: '9100', METRICS_PORT: '9100', HOST: '0.0.0.0' }),
      /^METRICS_PORT \(9100\) must differ from PORT/,
    );
    assert.match(
      refused({ METRICS_PORT: '8080' }),
      /^METRICS_PORT \(8080\) must differ from PORT \(8080\)/,
      'the default PORT counts',
    );
    // Port 0 means "any free port": two of them never clash.
    assert.equal(load({ PORT: '0', METRICS_PORT: '0' }).metricsPort, 0);
    // Two different specific addresses can share a port number.
    assert.equal(
      load({ PORT: '9100', METRICS_PORT: '9100', HOST: '10.0.0.5', METRICS_HOST: '127.0.0.1' }).metricsPort,
      9100,
    );
  });
});
