/**
 * `plantstore plants import` and `plantstore plants export` run as real processes
 * against real listening servers on SQLite test stores: files and stdin, both
 * formats, skip mode, all-or-nothing failures, exports to stdout and to a file,
 * a round trip into a second server, and progress only on a terminal.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { listen } from '../client/servers.js';
import { createHarness, type Harness } from '../support/harness.js';
import { tempDir } from '../support/temp.js';
import { cli, cliServer, hasScript, onTerminal } from './cli-process.js';

const ndjson = (plants: readonly (readonly [string, string, string?])[]) =>
  plants
    .map(
      ([id, name, tag]) =>
        `{"id":${id},"name":${JSON.stringify(name)}${tag === undefined ? '' : `,"tag":${JSON.stringify(tag)}`}}\n`,
    )
    .join('');

describe('plantstore plants import / export', () => {
  let h: Harness;
  let url: string;
  let env: Record<string, string>;
  let dir: string;
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  before(async () => {
    ({ h, url, env } = await cliServer());
    dir = tempDir('plantstore-bulk-cli-');
  });
  after(async () => {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('imports an NDJSON file, ids exact; piped, it prints the summary and no progress', async () => {
    const path = file(
      'plants.ndjson',
      ndjson([
        ['9223372036854775807', 'Monstera deliciosa', 'nd'],
        ['-9223372036854775808', 'Ficus', 'nd'],
        ['7', 'Fern'],
      ]),
    );
    const run = await cli(['plants', 'import', path, '--url', url], env);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'created 3, unchanged 0, skipped 0\n');
    assert.equal(run.stderr, '', 'no progress lines for a quick import off a terminal');
    const got = await cli(['plants', 'get', '9223372036854775807', '--url', url, '--json'], env);
    assert.equal(got.stdout, '{"id":9223372036854775807,"name":"Monstera deliciosa","tag":"nd"}\n');
    assert.equal(
      (await cli(['plants', 'import', path, '--url', url], env)).stdout,
      'created 0, unchanged 3, skipped 0\n',
      'a retry is harmless',
    );
  });

  it('imports a CSV file (chosen by its extension), --json printing the summary', async () => {
    const path = file('plants.csv', 'id,name,tag\r\n20,"Aloe, ""true"" vera",csv\r\n21,Cactus,\r\n');
    const run = await cli(['plants', 'import', path, '--url', url, '--json'], env);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, '{"created":2,"unchanged":0,"skipped":0,"problems":[]}\n');
    assert.equal((await cli(['plants', 'get', '20', '--url', url], env)).stdout, '20\tAloe, "true" vera\tcsv\n');
  });

  it('imports from stdin with --format, and refuses stdin without one', async () => {
    const run = await cli(
      ['plants', 'import', '-', '--format', 'ndjson', '--url', url],
      env,
      ndjson([['30', 'from stdin', 'stdin']]),
    );
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'created 1, unchanged 0, skipped 0\n');
    const csv = await cli(['plants', 'import', '-', '--format', 'csv', '--url', url], env, 'name,id\nstdin csv,31\n');
    assert.equal(csv.stdout, 'created 1, unchanged 0, skipped 0\n');
    const refused = await cli(['plants', 'import', '-', '--url', url], env, ndjson([['32', 'x']]));
    assert.equal(refused.code, 2);
    assert.equal(refused.stderr, 'plantstore: reading stdin needs --format ndjson or --format csv\n');
    const unknown = await cli(['plants', 'import', file('plants.txt', ''), '--url', url], env);
    assert.equal(unknown.code, 2);
    assert.match(
      unknown.stderr,
      /cannot tell the format of .*plants\.txt from its name \(\.ndjson, \.jsonl or \.csv\): pass --format/,
    );
  });

  it('--mode skip stores the valid lines and prints each problem with its line number', async () => {
    const path = file('mixed.jsonl', '{"id":40,"name":"good"}\n{"id":41}\n{"id":7,"name":"not Fern"}\nnot json\n');
    const run = await cli(['plants', 'import', path, '--mode', 'skip', '--url', url], env);
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.trimEnd().split('\n');
    assert.equal(lines[0], 'created 1, unchanged 0, skipped 3');
    assert.match(lines[1] ?? '', /^line 2: .*name/);
    assert.match(lines[2] ?? '', /^line 3: a plant with id 7 already exists/);
    assert.match(lines[3] ?? '', /^line 4: request body is not valid JSON/);
    assert.equal(lines.length, 4);
  });

  it("all or nothing: a bad line prints the server's message naming it, exits 1, and stores nothing", async () => {
    const conflict = await cli(
      [
        'plants',
        'import',
        file(
          'conflict.ndjson',
          ndjson([
            ['50', 'new'],
            ['7', 'not Fern'],
          ]),
        ),
        '--url',
        url,
      ],
      env,
    );
    assert.equal(conflict.code, 1);
    assert.equal(conflict.stdout, '');
    assert.match(
      conflict.stderr,
      /^plantstore: nothing was imported: line 2: a plant with id 7 already exists.*\(HTTP 409, error 40902\)\n$/,
    );
    const invalid = await cli(
      ['plants', 'import', file('invalid.ndjson', '{"id":51,"name":"ok"}\n{"id":"x","name":"bad"}\n'), '--url', url],
      env,
    );
    assert.equal(invalid.code, 1);
    assert.match(invalid.stderr, /^plantstore: nothing was imported: line 2: .*\(HTTP 400, error 40007\)\n$/);
    for (const id of ['50', '51'])
      assert.equal((await cli(['plants', 'get', id, '--url', url], env)).code, 1, `plant ${id} was not stored`);
    const missing = await cli(['plants', 'import', join(dir, 'missing.ndjson'), '--url', url], env);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /ENOENT.*missing\.ndjson/);
  });

  it('exports to stdout and to a file (CSV by its name), replacing the file only when complete', async () => {
    const stdout = await cli(['plants', 'export', '--tag', 'nd', '--url', url], env);
    assert.equal(stdout.code, 0, stdout.stderr);
    assert.equal(
      stdout.stdout,
      '{"id":-9223372036854775808,"name":"Ficus","tag":"nd"}\n{"id":9223372036854775807,"name":"Monstera deliciosa","tag":"nd"}\n',
    );
    const searched = await cli(['plants', 'export', '--search', 'aloe', '--format', 'csv', '--url', url], env);
    assert.equal(searched.stdout, 'id,name,tag\r\n20,"Aloe, ""true"" vera",csv\r\n');

    const out = join(dir, 'export.csv');
    const toFile = await cli(
      ['plants', 'export', '--output', out, '--tag', 'csv', '--tag', 'stdin', '--url', url],
      env,
    );
    assert.equal(toFile.code, 0, toFile.stderr);
    const written = 'id,name,tag\r\n20,"Aloe, ""true"" vera",csv\r\n30,from stdin,stdin\r\n';
    assert.equal(toFile.stdout, `exported 2 plants to ${out} (${Buffer.byteLength(written)} bytes)\n`);
    assert.equal(readFileSync(out, 'utf8'), written);

    const refused = await cli(['plants', 'export', '--output', out, '--url', url], {
      PLANTSTORE_TOKEN: h.tokens.write,
    });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /plants:read.*\(HTTP 403, error 40301\)/);
    assert.equal(
      readFileSync(out, 'utf8'),
      'id,name,tag\r\n20,"Aloe, ""true"" vera",csv\r\n30,from stdin,stdin\r\n',
      'a failed export leaves the file as it was',
    );
    assert.deepEqual(
      readdirSync(dir).filter((name) => name.endsWith('.partial')),
      [],
      'and no temporary file behind',
    );
  });

  it('export, then import into a second server, gives identical plants (NDJSON and CSV)', async () => {
    const second = await createHarness();
    try {
      const secondUrl = await listen(second);
      const secondEnv = { PLANTSTORE_TOKEN: second.tokens.all };
      const exported = join(dir, 'all.ndjson');
      assert.equal((await cli(['plants', 'export', '--output', exported, '--url', url], env)).code, 0);
      const count = readFileSync(exported, 'utf8').trimEnd().split('\n').length;
      assert.ok(count >= 8, `exported ${count} plants`);
      const imported = await cli(['plants', 'import', exported, '--url', secondUrl], secondEnv);
      assert.equal(imported.stdout, `created ${count}, unchanged 0, skipped 0\n`, imported.stderr);
      const again = await cli(['plants', 'export', '--url', secondUrl], secondEnv);
      assert.equal(again.stdout, readFileSync(exported, 'utf8'), 'the same plants, byte for byte');

      const csv = join(dir, 'all.csv');
      assert.equal((await cli(['plants', 'export', '--output', csv, '--url', url], env)).code, 0);
      const csvImport = await cli(['plants', 'import', csv, '--url', secondUrl], secondEnv);
      assert.equal(
        csvImport.stdout,
        `created 0, unchanged ${count}, skipped 0\n`,
        'the CSV export reads back as the very same plants',
      );
    } finally {
      await second.close();
    }
  });

  it(
    'draws a progress bar on a terminal',
    { skip: hasScript ? false : 'the script(1) command is not installed' },
    async () => {
      const path = file(
        'tty.ndjson',
        ndjson(Array.from({ length: 2000 }, (_, i) => [String(100_000 + i), `tty plant ${i}`, 'tty'] as const)),
      );
      // The escape that clears to the end of the line, made visible.
      const output = (await onTerminal(['plants', 'import', path, '--url', url], env)).replaceAll('\x1b[K', '<clear>');
      assert.match(output, /^\r\[░{16}\] {2}0% {2}0\.0\/98\.9 kB<clear>/, 'drawn at the start');
      assert.match(
        output,
        /\r\[█{16}\] {2}100% {2}98\.9\/98\.9 kB {2}sent in [0-9]+\.[0-9] s, committing 0:0[0-9]<clear>/,
        'and once all is sent',
      );
      assert.match(output, /\r<clear>created 2000, unchanged 0, skipped 0\r\n$/, 'then cleared for the summary');
    },
  );
});
