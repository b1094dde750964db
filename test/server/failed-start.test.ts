/**
 * A start that fails after the store opened (the address cannot be listened on)
 * closes the store before it rejects. The bug: startServer rejected with the store
 * still open, its writer thread perhaps still loading the SQLite addon, and the CLI
 * then called process.exit(2); Node tore the thread down mid-load and the process
 * died with "FATAL ERROR: Error::New napi_get_last_error_info" instead of exiting 2
 * (seen once in test/cli/start-up-errors.test.ts on a slow machine).
 *
 * SQLite deletes a store's -wal file when its last connection closes, so a -wal file
 * left behind means a connection was left open.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/index.js';
import { startServer } from '../../src/server.js';
import { discardedLog } from '../support/log-streams.js';

describe('a start that fails to listen', () => {
  let dir: string;
  let busy: Server;
  let busyPort: number;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'plantstore-failed-start-'));
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    busyPort = (busy.address() as { port: number }).port;
  });
  after(() => {
    busy.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const [what, env] of [
    ['a port already in use', () => ({ PORT: String(busyPort) })],
    ['a host that does not resolve', () => ({ PORT: '0', HOST: 'plantstore-test.invalid' })],
  ] as const) {
    it(`closes the store before rejecting: ${what}`, async () => {
      const path = join(dir, `${what.replaceAll(' ', '-')}.db`);
      const config = loadConfig({ DATABASE_URL: `sqlite:${path}`, LOG_LEVEL: 'silent', ...env() });
      await assert.rejects(startServer(config, { logStream: discardedLog() }), (error: NodeJS.ErrnoException) =>
        ['EADDRINUSE', 'ENOTFOUND', 'EAI_AGAIN'].includes(String(error.code)),
      );
      assert.ok(existsSync(path), 'the store was created');
      assert.equal(existsSync(`${path}-wal`), false, 'a -wal file is left: a connection to the store is still open');
    });
  }
});
