/**
 * Scale-out: two `plantstore serve` processes on one PostgreSQL schema behave as one
 * service. Both start on an empty schema at once (so they race to migrate and to
 * issue the first-start token), then share plants and tokens, and settle 100
 * concurrent creates of one id between them with one row and no 500.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { postgresAvailable } from '../support/backends.js';
import { createTestSchema, withAdminClient, type TestSchema } from '../support/postgres.js';
import { runCli, startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { call, createPlant, eventually, readPlant } from './client.js';

const TOKEN = /(pst_[A-Za-z0-9_-]{43})/;

describe('two service processes on one PostgreSQL database', { skip: !postgresAvailable() }, () => {
  let schema: TestSchema;
  let a: ServiceProcess;
  let b: ServiceProcess;
  let bootstrapToken: string;
  let cliToken: string;

  before(async () => {
    schema = await createTestSchema();
    const env = { DATABASE_URL: schema.url, DATABASE_POOL_SIZE: '4' };
    [a, b] = await Promise.all([startServiceProcess(env), startServiceProcess(env)]);
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await schema?.drop();
  });

  const countRows = (id: string) =>
    withAdminClient(
      async (c) =>
        (await c.query<{ n: number }>('SELECT count(*)::int AS n FROM plants WHERE id = $1', [id])).rows[0]?.n,
      schema.url,
    );

  it('starting together on an empty database, exactly one of them issues the first-start token', async () => {
    await eventually('a first-start banner is printed', async () => TOKEN.test(a.output() + b.output()), 10_000);
    const banners = [a.output(), b.output()].filter((output) => TOKEN.test(output));
    assert.equal(banners.length, 1);
    bootstrapToken = TOKEN.exec(banners[0]!)![1]!;
    assert.equal(
      await withAdminClient(
        async (c) => (await c.query<{ n: number }>('SELECT count(*)::int AS n FROM tokens')).rows[0]?.n,
        schema.url,
      ),
      1,
    );
  });

  it('a token issued once (first-start or CLI) works on both', async () => {
    for (const service of [a, b])
      assert.equal((await call(`${service.url}/plants`, { token: bootstrapToken })).status, 200);
    const created = await runCli(
      ['token', 'create', '--name', 'shared-client', '--scopes', 'plants:read,plants:write'],
      { DATABASE_URL: schema.url },
    );
    assert.equal(created.code, 0, created.stderr);
    cliToken = created.stdout.trim();
    for (const service of [a, b]) assert.equal((await call(`${service.url}/plants`, { token: cliToken })).status, 200);
  });

  it('a plant created through one is read, listed and deleted through the other', async () => {
    const created = await createPlant(
      a.url,
      cliToken,
      '{"id": 9223372036854775807, "name": "Monstera", "tag": "houseplant"}',
    );
    assert.equal(created.status, 200, created.body);
    const read = await readPlant(b.url, cliToken, '9223372036854775807');
    assert.equal(read.body, '{"id":9223372036854775807,"name":"Monstera","tag":"houseplant"}');
    const listed = await call(`${b.url}/plants?tag=houseplant`, { token: cliToken });
    assert.equal(listed.body, '[{"id":9223372036854775807,"name":"Monstera","tag":"houseplant"}]');
    // A retry through the other instance is recognised as one.
    const retried = await createPlant(
      b.url,
      cliToken,
      '{"id": 9223372036854775807, "name": "Monstera", "tag": "houseplant"}',
    );
    assert.equal(retried.status, 200);
    assert.equal(retried.body, created.body);
    assert.equal(
      (await call(`${b.url}/plants/9223372036854775807`, { method: 'DELETE', token: bootstrapToken })).status,
      204,
    );
    assert.equal((await readPlant(a.url, cliToken, '9223372036854775807')).status, 404);
  });

  it('100 parallel creates of one id spread over both store one row: 200 for its content, 409 for any other, never 500', async () => {
    const id = '-9223372036854775808';
    const variants = ['{"name": "Ficus"}', '{"name": "Ficus", "tag": "tree"}', '{"name": "Basil"}'];
    const bodies = Array.from({ length: 100 }, (_, i) => `{"id": ${id}, ${variants[i % 3]!.slice(1)}`);
    const replies = await Promise.all(
      bodies.map((body, i) => createPlant(i % 2 === 0 ? a.url : b.url, cliToken, body)),
    );

    assert.equal(await countRows(id), 1);
    const stored = JSON.parse((await readPlant(a.url, cliToken, id)).body.replace(id, '0')) as {
      name: string;
      tag?: string;
    };
    const storedBody = JSON.stringify(
      stored.tag === undefined ? { name: stored.name } : { name: stored.name, tag: stored.tag },
    );
    replies.forEach((reply, i) => {
      const sent = JSON.parse(bodies[i]!.replace(id, '0')) as { name: string; tag?: string };
      const same = sent.name === stored.name && sent.tag === stored.tag;
      if (same) {
        assert.equal(reply.status, 200, `request ${i}: ${reply.body}`);
        assert.equal(reply.body, storedBody);
      } else {
        assert.equal(reply.status, 409, `request ${i}: ${reply.body}`);
        assert.equal(JSON.parse(reply.body).error, 40901);
      }
    });
  });

  it('a revocation made once takes effect on both within the token cache TTL', async () => {
    const revoked = await runCli(['token', 'revoke', 'shared-client'], { DATABASE_URL: schema.url });
    assert.equal(revoked.code, 0, revoked.stderr);
    for (const service of [a, b]) {
      await eventually(
        `${service.url} refuses the revoked token`,
        async () => (await call(`${service.url}/plants`, { token: cliToken })).status === 401,
      );
    }
  });

  it('neither process logged an unexpected error', () => {
    for (const service of [a, b]) {
      assert.doesNotMatch(service.output(), /unexpected error|"status":500/);
      assert.equal(service.child.exitCode, null);
    }
  });
});
