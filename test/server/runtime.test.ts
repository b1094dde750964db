/**
 * The service on the runtime running this suite (CI runs it on Node 22 and Node 24).
 * better-sqlite3 12 wrapped its objects in Node's raw ObjectWrap, whose destructor
 * aborts the whole process on Node 24.19+ when V8 collects a Statement outside a JS
 * context: the service died with SIGABRT at start or at SIGTERM. V8's --gc-interval
 * makes collections happen every few thousand allocations, on the main thread and in
 * the SQLite writer's worker alike, so a driver that leaves that to chance aborts here.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { unsupportedRuntime } from '../../src/cli/supported-runtime.js';
import { issueToken } from '../../src/tokens/token-service.js';
import { sqliteBackend } from '../support/backends.js';
import { fromSource, runCli, startServiceProcess } from '../support/service-process.js';
import { checkedFetch } from '../support/checked-fetch.js';

const SUPPORTED_MAJORS = [22, 24];

describe(`the service on Node ${process.versions.node}`, () => {
  it('runs on a supported Node.js line', () => {
    const major = Number(process.versions.node.split('.')[0]);
    assert.ok(
      SUPPORTED_MAJORS.includes(major),
      `Node ${process.versions.node} is not one of the supported lines (${SUPPORTED_MAJORS.join(', ')})`,
    );
  });

  it('serves creates through the writer thread with V8 collecting constantly, and exits 0 on SIGTERM', async () => {
    const opened = await sqliteBackend.open();
    try {
      const { secret } = await issueToken(opened.store.tokens, { name: 'gc', scopes: ['plants:read', 'plants:write'] });
      const service = await startServiceProcess(
        { DATABASE_URL: opened.databaseUrl },
        fromSource('--gc-interval=2000'),
        60_000,
      );
      const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
      // Concurrent creates so that the writer thread commits them in batches.
      const statuses = await Promise.all(
        Array.from({ length: 200 }, async (_, i) => {
          const response = await checkedFetch(`${service.url}/plants`, {
            method: 'POST',
            headers,
            body: `{"id": ${i}, "name": "p${i}"}`,
          });
          await response.arrayBuffer();
          return response.status;
        }),
      );
      assert.deepEqual(new Set(statuses), new Set([200]));
      const read = await checkedFetch(`${service.url}/plants/199`, { headers });
      assert.equal(await read.text(), '{"id":199,"name":"p199"}');

      assert.equal(await service.stop('SIGTERM'), 0, service.output());
      assert.doesNotMatch(service.output(), /Assertion failed|Native stack trace/);
    } finally {
      await opened.cleanup();
    }
  });
});

// Debian's own Node.js (20 on the machines CI runs on), if there is one: older than the
// driver supports, so the CLI must refuse it with a message instead of a segfault.
const SYSTEM_NODE = '/usr/bin/node';
function systemNodeVersion(): string | undefined {
  try {
    return execFileSync(SYSTEM_NODE, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}
const systemNode = systemNodeVersion();

describe('on an unsupported Node.js', () => {
  it('names the runtime and the supported lines', () => {
    assert.match(
      unsupportedRuntime('20.20.2') ?? '',
      /^Node\.js 20\.20\.2 is not supported: run Plant Store on Node\.js 22 or 24 /,
    );
    assert.equal(unsupportedRuntime('22.12.0'), undefined);
    assert.equal(unsupportedRuntime('24.21.0'), undefined);
  });

  const unsupported = systemNode !== undefined && unsupportedRuntime(systemNode) !== undefined;
  it(
    `plantstore refuses to start on ${SYSTEM_NODE} ${systemNode ?? '(absent)'} with that message and exit code 2`,
    { skip: !unsupported && `${SYSTEM_NODE} is absent or supported` },
    async () => {
      const opened = await sqliteBackend.open();
      try {
        const run = await runCli(['token', 'list'], { DATABASE_URL: opened.databaseUrl }, { executable: SYSTEM_NODE });
        assert.equal(run.code, 2, run.stderr);
        assert.equal(run.stderr, `plantstore: ${unsupportedRuntime(systemNode)}\n`);
      } finally {
        await opened.cleanup();
      }
    },
  );
});
