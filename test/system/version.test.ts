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

  it('tells a build of unreleased changes from the release before it (CHANGELOG.md decides which it is)', () => {
    const changelog = readFileSync(new URL('../../CHANGELOG.md', import.meta.url), 'utf8');
    const headings = [...changelog.matchAll(/^## (\S+)/gm)].map(([, heading]) => heading!);
    const released = headings.find((heading) => /^\d+\.\d+\.\d+$/.test(heading));
    assert.ok(released, 'CHANGELOG.md names no released version');
    if (headings[0] !== 'Unreleased') return assert.equal(packageVersion, headings[0]);
    // With changes not in any release, the version is a pre-release (x.y.z-tag) of a version after the last one.
    const parts = /^(\d+)\.(\d+)\.(\d+)-[0-9A-Za-z.-]+$/.exec(packageVersion)?.slice(1).map(Number);
    assert.ok(parts, `${packageVersion} is a release's version, yet CHANGELOG.md has an "Unreleased" section`);
    const last = released.split('.').map(Number);
    const after = parts.findIndex((part, i) => part !== last[i]);
    assert.ok(after !== -1 && parts[after]! > last[after]!, `${packageVersion} does not come after ${released}`);
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
