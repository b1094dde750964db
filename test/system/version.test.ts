/**
 * The version and the store a process reports: the start-up log line names both (never a password), and the
 * version is the package's.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { describeStore } from '../../src/system/store-description.js';
import { SERVICE_VERSION } from '../../src/system/version.js';
import { testBackends } from '../support/backends.js';
import { startServiceProcess } from '../support/service-process.js';

const packageVersion = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

describe('the version and the store in use', () => {
  it("is the package's version", () => {
    assert.equal(SERVICE_VERSION, packageVersion);
  });

  it('describes a PostgreSQL store by host, database and user, never its password or query', () => {
    const described = describeStore(
      'postgres://plants:s3cret%21@db.internal:5433/plantstore?sslmode=require&password=x',
    );
    assert.deepEqual(described, { kind: 'postgres', host: 'db.internal:5433', database: 'plantstore', user: 'plants' });
    assert.doesNotMatch(JSON.stringify(described), /s3cret|password|sslmode/);
  });

  for (const backend of testBackends())
    it(`is in the start-up log line [${backend.name}]`, async () => {
      const opened = await backend.open();
      try {
        const service = await startServiceProcess({ DATABASE_URL: opened.databaseUrl, LOG_FORMAT: 'json' });
        let line: { version?: string; store?: Record<string, string> } | undefined;
        for (let i = 0; i < 100 && line === undefined; i += 1) {
          line = service
            .output()
            .split('\n')
            .filter((text) => text.startsWith('{'))
            .map((text) => JSON.parse(text) as { msg: string; version?: string; store?: Record<string, string> })
            .find((entry) => entry.msg === `Plant Store ${packageVersion} running on Node.js`);
          if (line === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
        }
        assert.equal(await service.stop(), 0);
        assert.ok(line !== undefined, service.output());
        assert.equal(line.version, packageVersion);
        assert.deepEqual(line.store, describeStore(opened.databaseUrl));
        assert.equal(line.store?.kind, backend.name);
        assert.doesNotMatch(service.output(), /postgres:\/\/[^@\s]*:[^@\s]*@/, 'no credentials in the output');
      } finally {
        await opened.cleanup();
      }
    });
});
