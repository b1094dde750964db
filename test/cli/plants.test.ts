/**
 * `plantstore plants ...` run as a real process against a real listening server:
 * output for people (a table on a terminal) and scripts (--json, tab-separated),
 * one-line errors quoting the server, exit codes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { closedPort } from '../client/servers.js';
import type { Harness } from '../support/harness.js';
import { cli, cliServer, hasScript, onTerminal } from './cli-process.js';

/** On a terminal: its lines, without \r. */
async function terminalLines(args: readonly string[], env: Record<string, string>): Promise<string[]> {
  return (await onTerminal(args, env)).replace(/\r/g, '').trimEnd().split('\n');
}

describe('plantstore plants', () => {
  let h: Harness;
  let url: string;
  let env: Record<string, string>;

  before(async () => {
    ({ h, url, env } = await cliServer());
  });
  after(() => h.close());

  it('add, get, list and rm, with --json keeping a 19-digit id exact', async () => {
    const added = await cli(
      ['plants', 'add', '9223372036854775807', 'Monstera deliciosa', '--tag', 'houseplant', '--url', url, '--json'],
      env,
    );
    assert.equal(added.code, 0, added.stderr);
    assert.equal(added.stdout, '{"id":9223372036854775807,"name":"Monstera deliciosa","tag":"houseplant"}\n');

    const got = await cli(['plants', 'get', '9223372036854775807', '--url', url, '--json'], env);
    assert.equal(got.stdout, '{"id":9223372036854775807,"name":"Monstera deliciosa","tag":"houseplant"}\n');

    const listed = await cli(['plants', 'list', '--url', url, '--json'], env);
    assert.equal(listed.stdout, '[{"id":9223372036854775807,"name":"Monstera deliciosa","tag":"houseplant"}]\n');

    const removed = await cli(['plants', 'rm', '9223372036854775807', '--url', url], env);
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal(removed.stdout, 'deleted plant 9223372036854775807\n');
  });

  it('update changes the name or tag (--no-tag removes it), prints the new ETag, fails with --if-match on a stale version, and refuses an update with nothing to change or with both --tag and --no-tag', async () => {
    assert.equal(
      (await cli(['plants', 'add', '9223372036854775806', 'Fern', '--tag', 'shade', '--url', url], env)).code,
      0,
    );
    const renamed = await cli(['plants', 'update', '9223372036854775806', '--name', 'Fern 2', '--url', url], env);
    assert.equal(renamed.code, 0, renamed.stderr);
    assert.equal(renamed.stdout, '9223372036854775806\tFern 2\tshade\n');
    const etag = /^etag ("[0-9]+")$/m.exec(renamed.stderr)?.[1];
    assert.ok(etag !== undefined, renamed.stderr);
    const untagged = await cli(
      ['plants', 'update', '9223372036854775806', '--no-tag', '--if-match', etag, '--url', url, '--json'],
      env,
    );
    assert.equal(untagged.code, 0, untagged.stderr);
    const body = JSON.parse(untagged.stdout) as { name: string; tag?: string; etag: string };
    assert.equal(
      untagged.stdout.startsWith('{"id":9223372036854775806,"name":"Fern 2","etag":'),
      true,
      untagged.stdout,
    );
    assert.notEqual(body.etag, etag);
    const stale = await cli(
      ['plants', 'update', '9223372036854775806', '--tag', 'x', '--if-match', etag, '--url', url],
      env,
    );
    assert.equal(stale.code, 1);
    assert.match(stale.stderr, /is at version/);
    const nothing = await cli(['plants', 'update', '9223372036854775806', '--url', url], env);
    assert.equal(nothing.code, 2);
    assert.match(nothing.stderr, /nothing to change: give --name, --tag or --no-tag/);
    // Both, in either order: refused rather than the last one silently winning.
    for (const both of [
      ['--tag', 'x', '--no-tag'],
      ['--no-tag', '--tag', 'x'],
    ]) {
      const conflicting = await cli(['plants', 'update', '9223372036854775806', ...both, '--url', url], env);
      assert.equal(conflicting.code, 2, conflicting.stderr);
      assert.match(conflicting.stderr, /give --tag or --no-tag, not both/);
    }
    const refused = await cli(['plants', 'rm', '9223372036854775806', '--if-match', etag, '--url', url], env);
    assert.equal(refused.code, 1);
    assert.equal(
      (await cli(['plants', 'rm', '9223372036854775806', '--if-match', body.etag, '--url', url], env)).code,
      0,
    );
  });

  it('prints tab-separated lines when stdout is not a terminal, and says when more pages follow', async () => {
    for (const id of ['1', '2', '3'])
      assert.equal((await cli(['plants', 'add', id, `Fern ${id}`, '--tag', 'tsv', '--url', url], env)).code, 0);
    const page = await cli(['plants', 'list', '--tag', 'tsv', '--limit', '2', '--url', url], env);
    assert.equal(page.code, 0, page.stderr);
    assert.equal(page.stdout, '1\tFern 1\ttsv\n2\tFern 2\ttsv\n');
    const cursor = /^more plants follow: add --cursor ([A-Za-z0-9_.-]+), or --all\n$/.exec(page.stderr)?.[1];
    assert.ok(cursor !== undefined, page.stderr);
    const next = await cli(['plants', 'list', '--tag', 'tsv', '--limit', '2', '--cursor', cursor, '--url', url], env);
    assert.equal(next.stdout, '3\tFern 3\ttsv\n');
    assert.equal(next.stderr, '');
    const all = await cli(['plants', 'list', '--tag', 'tsv', '--limit', '2', '--all', '--url', url], env);
    assert.equal(all.stdout.trim().split('\n').length, 3);
  });

  it('finds with --search, --sort, repeated --tag and --count', async () => {
    for (const [id, name, tag] of [
      ['61', 'Monstera deliciosa', 'cli-a'],
      ['62', 'monstera Adansonii', 'cli-b'],
      ['63', 'Ficus', 'cli-a'],
      ['64', 'Monstera obliqua', 'cli-c'],
    ] as const) {
      assert.equal((await cli(['plants', 'add', id, name, '--tag', tag, '--url', url], env)).code, 0);
    }
    const found = await cli(
      [
        'plants',
        'list',
        '--search',
        'mon',
        '--sort',
        'name',
        '--tag',
        'cli-a',
        '--tag',
        'cli-b',
        '--count',
        '--url',
        url,
      ],
      env,
    );
    assert.equal(found.code, 0, found.stderr);
    assert.equal(found.stdout, '62\tmonstera Adansonii\tcli-b\n61\tMonstera deliciosa\tcli-a\n');
    assert.equal(found.stderr, 'total\t2\n');
    const json = await cli(
      ['plants', 'list', '--search', 'MONSTERA', '--sort', '-name', '--count', '--json', '--url', url],
      env,
    );
    assert.equal(
      json.stdout,
      '{"total":3,"exact":true,"plants":[{"id":64,"name":"Monstera obliqua","tag":"cli-c"},{"id":61,"name":"Monstera deliciosa","tag":"cli-a"},{"id":62,"name":"monstera Adansonii","tag":"cli-b"}]}\n',
    );
    const all = await cli(
      [
        'plants',
        'list',
        '--search',
        'monstera',
        '--sort',
        'name',
        '--tag',
        'cli-a',
        '--tag',
        'cli-c',
        '--limit',
        '1',
        '--all',
        '--count',
        '--url',
        url,
      ],
      env,
    );
    assert.equal(all.code, 0, all.stderr);
    assert.equal(
      all.stdout,
      '61\tMonstera deliciosa\tcli-a\n64\tMonstera obliqua\tcli-c\n',
      'every page, in name order',
    );
    assert.equal(all.stderr, 'total\t2\n');
    const bad = await cli(['plants', 'list', '--sort', 'color', '--url', url], env);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /must be one of id, -id, name, -name/);
  });

  it(
    'prints an aligned table on a terminal',
    { skip: hasScript ? false : 'the script(1) command is not installed' },
    async () => {
      await cli(['plants', 'add', '42', 'Aloe vera', '--url', url], env);
      const lines = await terminalLines(['plants', 'get', '42', '--url', url], env);
      assert.match(lines[0] ?? '', /^ID\s+NAME\s+TAG$/);
      assert.match(lines[1] ?? '', /^42\s+Aloe vera$/);
    },
  );

  it(
    '--count on a terminal: the count under the table; the cursor it prints keeps the search and order',
    { skip: hasScript ? false : 'the script(1) command is not installed' },
    async () => {
      for (const [id, name] of [
        ['81', 'Haworthia attenuata'],
        ['82', 'Haworthia cooperi'],
        ['83', 'Haworthia fasciata'],
      ] as const) {
        assert.equal((await cli(['plants', 'add', id, name, '--tag', 'tty', '--url', url], env)).code, 0);
      }
      const lines = await terminalLines(
        ['plants', 'list', '--search', 'haworthia', '--sort', '-name', '--limit', '2', '--count', '--url', url],
        env,
      );
      assert.equal(lines.length, 5, lines.join('\n'));
      assert.match(lines[0] ?? '', /^ID\s+NAME\s+TAG$/);
      assert.match(lines[1] ?? '', /^83\s+Haworthia fasciata\s+tty$/);
      assert.match(lines[2] ?? '', /^82\s+Haworthia cooperi\s+tty$/);
      assert.equal(lines[3], '3 plants match');
      const cursor = /^more plants follow: add --cursor ([A-Za-z0-9_.-]+), or --all$/.exec(lines[4] ?? '')?.[1];
      assert.ok(cursor !== undefined, lines[4]);

      const next = await cli(
        [
          'plants',
          'list',
          '--search',
          'haworthia',
          '--sort',
          '-name',
          '--limit',
          '2',
          '--cursor',
          cursor,
          '--count',
          '--url',
          url,
        ],
        env,
      );
      assert.equal(next.code, 0, next.stderr);
      assert.equal(next.stdout, '81\tHaworthia attenuata\ttty\n');
      assert.equal(next.stderr, 'total\t3\n', 'the last page: a count, no hint');
      const otherOrder = await cli(
        ['plants', 'list', '--search', 'haworthia', '--sort', 'name', '--cursor', cursor, '--url', url],
        env,
      );
      assert.equal(otherOrder.code, 1, 'a cursor is only valid with the order it came from');

      const one = await terminalLines(['plants', 'list', '--search', 'fasc', '--count', '--url', url], env);
      assert.equal(one.at(-1), '1 plant matches');
    },
  );

  it('reads the token from --token too', async () => {
    const run = await cli(['plants', 'add', '50', 'Cactus', '--url', url, '--token', h.tokens.write]);
    assert.equal(run.code, 0, run.stderr);
  });

  describe('failures: one line quoting the server, non-zero exit', () => {
    it('404', async () => {
      const run = await cli(['plants', 'get', '404404', '--url', url], env);
      assert.equal(run.code, 1);
      assert.equal(run.stdout, '');
      assert.equal(run.stderr, 'plantstore: no plant has id 404404 (HTTP 404, error 40402)\n');
    });

    it('409 on a conflicting add', async () => {
      await cli(['plants', 'add', '409', 'first', '--url', url], env);
      const run = await cli(['plants', 'add', '409', 'second', '--url', url], env);
      assert.equal(run.code, 1);
      assert.match(run.stderr, /^plantstore: a plant with id 409 already exists .*\(HTTP 409, error 40901\)\n$/);
    });

    it('401 with a revoked-looking token; 403 with one lacking the scope', async () => {
      const bad = await cli(['plants', 'list', '--url', url], { PLANTSTORE_TOKEN: 'pst_nope' });
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /^plantstore: the bearer token is malformed.*\(HTTP 401, error 40102\)\n$/);
      const reader = await cli(['plants', 'rm', '1', '--url', url], { PLANTSTORE_TOKEN: h.tokens.read });
      assert.equal(reader.code, 1);
      assert.match(reader.stderr, /needs a token with the plants:write scope.*\(HTTP 403, error 40301\)\n$/);
    });

    it('no token at all is a configuration error (exit 2), before any request', async () => {
      const run = await cli(['plants', 'list', '--url', url]);
      assert.equal(run.code, 2);
      assert.match(run.stderr, /^plantstore: no API token: set PLANTSTORE_TOKEN or pass --token/);
    });

    it('an id that is not an int64 is refused by the CLI', async () => {
      const run = await cli(['plants', 'get', '9223372036854775808', '--url', url], env);
      assert.notEqual(run.code, 0);
      assert.match(run.stderr, /outside the int64 range/);
    });

    it('a service that is not running', async () => {
      const port = await closedPort();
      const run = await cli(['plants', 'list', '--url', `http://127.0.0.1:${port}`], env);
      assert.equal(run.code, 1);
      assert.match(
        run.stderr,
        new RegExp(`^plantstore: cannot reach http://127\\.0\\.0\\.1:${port}: .*ECONNREFUSED.*\n$`),
      );
    });
  });

  it('--help documents every command, plants ones included', async () => {
    const run = await cli(['--help']);
    assert.equal(run.code, 0);
    for (const command of [
      'serve',
      'migrate',
      'token create',
      'token list',
      'token revoke',
      'plants add',
      'plants get',
      'plants list',
      'plants rm',
    ]) {
      assert.match(run.stdout, new RegExp(`plantstore ${command}\\b`), command);
    }
  });
});
