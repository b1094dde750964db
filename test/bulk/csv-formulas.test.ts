/**
 * A CSV export never hands a spreadsheet a formula, on every backend: a name or tag
 * starting with =, +, -, @ (or a single quote, so the escape can be undone) is
 * written quoted, behind a single quote; an import of that export gives back the
 * identical plants; and a cell that only looks escaped is read as written.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, type Harness } from '../support/harness.js';
import { listed } from '../support/pages.js';

const NDJSON = { 'content-type': 'application/x-ndjson' };
const CSV = { 'content-type': 'text/csv' };

const PLANTS = [
  { id: '-9223372036854775808', name: '-1', tag: '-t' },
  { id: '1', name: "=cmd|' /C calc'!A0", tag: '=HYPERLINK("http://x")' },
  { id: '2', name: '+SUM(1)' },
  { id: '3', name: '@x', tag: '@' },
  { id: '4', name: "'quoted", tag: "''" },
  { id: '5', name: "''=twice" },
  { id: '6', name: 'plain = fine', tag: "it's" },
];

for (const backend of testBackends())
  describe(`CSV export and formulas [${backend.name}]`, () => {
    let h: Harness;
    beforeEach(async () => {
      h = await createHarness({ backend });
    });
    afterEach(async () => {
      await h.close();
    });

    const importInto = (harness: Harness, payload: string, headers: Record<string, string>) =>
      harness.request({
        method: 'POST',
        url: '/plants/import',
        headers: { ...headers, ...bearer(harness.tokens.write) },
        payload,
      });
    const plantsOf = async (harness: Harness) =>
      (await listed(harness.store, { limit: 1000 })).map((p) => [p.id.toString(), p.name, p.tag]);

    it('writes a name or tag that would run as a formula behind a single quote, and reads it back exactly', async () => {
      const lines = PLANTS.map((p) => JSON.stringify(p).replace(/"id":"(-?\d+)"/, '"id":$1')).join('\n');
      assert.equal((await importInto(h, lines, NDJSON)).statusCode, 200);
      const exported = await h.request({
        method: 'GET',
        url: '/plants/export?format=csv',
        headers: bearer(h.tokens.read),
      });
      assert.equal(exported.statusCode, 200);
      assert.equal(
        exported.body,
        [
          'id,name,tag',
          // An id is a number, never a formula: written as it is.
          `-9223372036854775808,"'-1","'-t"`,
          `1,"'=cmd|' /C calc'!A0","'=HYPERLINK(""http://x"")"`,
          `2,"'+SUM(1)",`,
          `3,"'@x","'@"`,
          `4,"''quoted","'''"`,
          `5,"'''=twice",`,
          `6,plain = fine,it's`,
          '',
        ].join('\r\n'),
      );

      const copy = await createHarness({ backend });
      try {
        const imported = await importInto(copy, exported.body, CSV);
        assert.equal(imported.statusCode, 200, imported.body);
        assert.deepEqual(await plantsOf(copy), await plantsOf(h));
        assert.deepEqual(
          await plantsOf(copy),
          PLANTS.map((p) => [p.id, p.name, p.tag]),
        );
      } finally {
        await copy.close();
      }
    });

    it('reads a cell that starts with a single quote the export would not have written as it is', async () => {
      const csv = ['id,name,tag', "1,'Monstera,'o", `2,"'=x",'`, `3,=raw,+raw`].join('\r\n');
      const response = await importInto(h, csv, CSV);
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual(await plantsOf(h), [
        ['1', "'Monstera", "'o"],
        ['2', '=x', "'"],
        ['3', '=raw', '+raw'],
      ]);
    });
  });
