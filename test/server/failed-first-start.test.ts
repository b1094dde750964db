/**
 * A first start that fails must not use up the first-start token. The bug: the token was
 * stored before the service listened; with the port taken the start failed before the banner
 * was printed, and the next start printed none either (the store was no longer empty), so a
 * newcomer was left with a store no token they knew could use.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { testBackends } from '../support/backends.js';
import { checkedFetch } from '../support/checked-fetch.js';
import { runCli, startServiceProcess } from '../support/service-process.js';
import { waitFor } from '../support/wait.js';

const BANNER_TOKEN = /^ {4}(pst_[A-Za-z0-9_-]{43})$/m;

let busy: Server;
let busyPort: number;
before(async () => {
  busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  busyPort = (busy.address() as { port: number }).port;
});
after(() => busy.close());

for (const backend of testBackends())
  describe(`a first start whose port is taken [${backend.name}]`, () => {
    it('prints no token, and the next start prints one that works', async () => {
      const opened = await backend.open();
      try {
        const failed = await runCli(
          ['serve'],
          { DATABASE_URL: opened.databaseUrl, HOST: '127.0.0.1', PORT: String(busyPort), LOG_LEVEL: 'info' },
          {},
          { timeout: 60_000 },
        );
        assert.notEqual(failed.code, 0, `the start on a taken port succeeded:\n${failed.stdout}${failed.stderr}`);
        assert.match(failed.stdout + failed.stderr, /EADDRINUSE|in use/);
        assert.doesNotMatch(failed.stdout + failed.stderr, /pst_/, 'a failed start printed a token');

        const next = await startServiceProcess({ DATABASE_URL: opened.databaseUrl });
        try {
          await waitFor('the first-start banner is printed', () => BANNER_TOKEN.test(next.output()));
          const token = BANNER_TOKEN.exec(next.output())?.[1];
          const answer = await checkedFetch(`${next.url}/tokens/current`, {
            headers: { authorization: `Bearer ${token}` },
          });
          const body = await answer.text();
          assert.equal(answer.status, 200, body);
          assert.equal((JSON.parse(body) as { name: string }).name, 'bootstrap');
          assert.equal(await next.stop(), 0);
        } finally {
          await next.stop('SIGKILL');
        }
      } finally {
        await opened.cleanup();
      }
    });
  });
