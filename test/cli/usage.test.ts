/**
 * The command line itself: --version, one-line usage errors with exit status 2, `plants search`,
 * and `plants seed` (a sample catalogue) against a real listening server.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Harness } from '../support/harness.js';
import { cli, cliServer, ROOT } from './cli-process.js';

const packageVersion = (JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')) as { version: string }).version;

describe('plantstore command line', () => {
  let h: Harness;
  let url: string;
  let env: Record<string, string>;

  before(async () => {
    ({ h, url, env } = await cliServer());
  });
  after(() => h.close());

  it('--version prints the package version and exits 0', async () => {
    for (const flag of ['--version', '-V']) {
      const run = await cli([flag]);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, `${packageVersion}\n`);
    }
  });

  it('a usage mistake is one line naming it, with where to read more, and exit status 2', async () => {
    const cases: [string[], RegExp][] = [
      [['plants', 'add', '1', 'x', '--colour', 'red'], /^plantstore plants add: unknown option '--colour'/],
      [['plants', 'add', '1'], /^plantstore plants add: missing required argument 'name'/],
      [['plants', 'get', 'abc'], /^plantstore plants get: .*'abc'.*/],
      [['plants', 'serch'], /^plantstore plants: unknown command 'serch' \(Did you mean search\?\)/],
      [['nonsense'], /^plantstore: unknown command 'nonsense'/],
    ];
    for (const [args, expected] of cases) {
      const run = await cli(args, env);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, expected);
      assert.match(run.stderr, /; see plantstore( \w+)* --help\n$/);
      assert.equal(run.stderr.split('\n').length, 2, `one line: ${run.stderr}`);
      assert.equal(run.stdout, '');
    }
  });

  it('seed loads a few hundred real plants with tags, and a second seed changes nothing', async () => {
    const first = await cli(['plants', 'seed', '--first-id', '1000', '--url', url, '--json'], env);
    assert.equal(first.code, 0, first.stderr);
    const summary = JSON.parse(first.stdout) as { created: number; unchanged: number; skipped: number };
    assert.ok(summary.created >= 300, `created ${summary.created}`);
    assert.equal(summary.skipped, 0);
    const again = await cli(['plants', 'seed', '--first-id', '1000', '--url', url], env);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(
      again.stdout,
      `sample catalogue: created 0, unchanged ${summary.created}, skipped 0 (ids 1000 to ${999 + summary.created})\n`,
    );
    const tags = await cli(['plants', 'list', '--tag', 'succulent', '--count', '--json', '--url', url], env);
    assert.ok((JSON.parse(tags.stdout) as { total: number }).total >= 20, tags.stdout);
  });

  it('search finds plants by the words of their names, as list --search does', async () => {
    const searched = await cli(['plants', 'search', 'monstera', '--url', url], env);
    assert.equal(searched.code, 0, searched.stderr);
    const listed = await cli(['plants', 'list', '--search', 'monstera', '--url', url], env);
    assert.equal(searched.stdout, listed.stdout);
    assert.match(searched.stdout, /^\d+\tMonstera deliciosa\thouseplant$/m);
    const two = await cli(['plants', 'search', 'venus', 'fly', '--all', '--json', '--url', url], env);
    assert.match(two.stdout, /"name":"Dionaea muscipula \(Venus flytrap\)","tag":"carnivorous"/);
  });
});
