/**
 * The bundle `npm start` and the `plantstore` bin run (scripts/bundle-service.ts), as a process on each store, end
 * to end: its chunks load, the modules it leaves out are found in node_modules, and the SQLite writer's worker
 * starts beside it.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { Errors } from '../../src/http/errors.js';
import { testBackends } from '../support/backends.js';
import { bundledCli } from '../support/bundled-cli.js';
import { runCli, startServiceProcess, type CliCommand } from '../support/service-process.js';
import { checkedFetch } from '../support/checked-fetch.js';

let bundle: CliCommand;

before(async () => {
  bundle = { nodeArgs: [await bundledCli()] };
});

const BIG_ID = '9007199254740993'; // 2^53 + 1: exact only if the body is parsed losslessly

for (const backend of testBackends())
  describe(`the bundled service [${backend.name}]`, () => {
    it('creates a token with its CLI, serves the resource, docs and metrics, and keeps creates across a restart', async () => {
      const opened = await backend.open();
      try {
        const env = { DATABASE_URL: opened.databaseUrl };
        const created = await runCli(
          ['token', 'create', '--name', 'bundle', '--scopes', 'plants:read,plants:write,admin'],
          env,
          bundle,
        );
        assert.equal(created.code, 0, created.stderr);
        const token = created.stdout.trim().split('\n').pop() as string;
        assert.match(token, /^pst_/);
        const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

        const service = await startServiceProcess(env, bundle);
        const post = (body: string) => checkedFetch(`${service.url}/plants`, { method: 'POST', headers, body });

        const first = await post(`{"id": ${BIG_ID}, "name": "Monstera", "tag": "houseplant"}`);
        assert.equal(first.status, 200);
        assert.equal(await first.text(), '{"name":"Monstera","tag":"houseplant"}'); // a Plant: no id, the client chose it

        const conflict = await post(`{"id": ${BIG_ID}, "name": "Another"}`);
        assert.equal(conflict.status, 409);
        assert.equal(((await conflict.json()) as { error: number }).error, Errors.PLANT_CONFLICT.code);

        const invalid = await post('{"id": "seven", "name": "Fern"}');
        assert.equal(invalid.status, 400);
        const problem = (await invalid.json()) as { error: number; message: string };
        assert.equal(problem.error, Errors.INVALID_FIELD.code);
        assert.match(problem.message, /\bid\b/);

        const list = await checkedFetch(`${service.url}/plants?limit=10`, { headers });
        assert.equal(list.status, 200);
        assert.match(await list.text(), new RegExp(`"id":${BIG_ID},"name":"Monstera"`));

        // Scalar's renderer is left out of the bundle and loaded on the first /docs request.
        const docs = await checkedFetch(`${service.url}/docs/`);
        assert.equal(docs.status, 200);
        assert.match(await docs.text(), /<html/i);

        const metrics = await checkedFetch(`${service.url}/metrics`, { headers });
        assert.equal(metrics.status, 200);
        assert.match(
          await metrics.text(),
          /^plantstore_http_requests_total\{method="POST",route="\/plants",status_code="200"\} 1$/m,
        );

        assert.equal(await service.stop(), 0);

        const restarted = await startServiceProcess(env, bundle);
        const again = await checkedFetch(`${restarted.url}/plants/${BIG_ID}`, { headers });
        assert.equal(
          `${again.status} ${await again.text()}`,
          `200 {"id":${BIG_ID},"name":"Monstera","tag":"houseplant"}`,
        );
        assert.equal(await restarted.stop(), 0);
      } finally {
        await opened.cleanup();
      }
    });
  });
