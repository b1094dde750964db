/**
 * The README's first-run figures are bench/README.md's latest ones. The README once went on quoting an older run
 * (68 s from a clone to the first plant, `npm ci` 57 s) after bench/README.md had a newer table (26.25 s, 21.89 s).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

/** The seconds of each row of bench/README.md's "First run" table, by the row's label. */
function firstRunTable(): Map<string, string> {
  const section = /^## First run[^\n]*\n([\s\S]*?)(?=^## )/m.exec(read('bench/README.md'))?.[1];
  assert.ok(section, 'bench/README.md has no "First run" section');
  const rows = [...section.matchAll(/^\| ([^|]+?) \| ([\d.]+) s \|$/gm)];
  assert.ok(rows.length >= 3, 'the "First run" section has no table of times');
  return new Map(rows.map(([, label, seconds]) => [label!, seconds!]));
}

describe("the README's first-run figures", () => {
  it('are those of the latest first-run table in bench/README.md', () => {
    const readme = read('README.md').replace(/\s+/g, ' ');
    const quoted =
      /From a clone to the first `POST \/plants` answered: ([\d.]+) s, of which `npm ci` ([\d.]+) s; `npm start` of a built checkout to `\/healthz`: ([\d.]+) s/.exec(
        readme,
      );
    assert.ok(quoted, 'the README no longer quotes the first-run figures in the words this test reads');
    const table = firstRunTable();
    const row = (start: string) => {
      const found = [...table].find(([label]) => label.startsWith(start));
      assert.ok(found, `bench/README.md's first-run table has no row "${start}..."`);
      return found[1];
    };
    assert.deepEqual(quoted.slice(1), [
      row('clone to the first POST /plants 200'),
      row('npm ci'),
      row('npm start of the built clone to /healthz 200'),
    ]);
  });
});
