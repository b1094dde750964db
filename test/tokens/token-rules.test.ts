/**
 * A new token's name and lifetime, on both stores: the OpenAPI document states each rule (pattern, length), and the
 * service keeps to exactly that rule. A lifetime beyond the bound (3650 days) is refused, naming expiresIn and the
 * bound, and stores nothing (it once answered 500 `Invalid time value`, after SQLite had stored the token).
 * The CLI keeps to the same rules.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { Errors } from '../../src/http/errors.js';
import { assertError } from '../support/assertions.js';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, json, type Harness } from '../support/harness.js';
import { fromSource, runCli } from '../support/service-process.js';

interface StringRule {
  readonly pattern?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
}

/** A string property of the document's NewToken schema. */
function documented(h: Harness, property: 'name' | 'expiresIn'): StringRule {
  type Doc = { components: { schemas: { NewToken: { properties: Record<string, StringRule> } } } };
  const rule = (h.app.swagger() as unknown as Doc).components.schemas.NewToken.properties[property];
  assert.ok(rule !== undefined);
  return rule;
}

/** Whether the document's rule accepts `value`, as a client reading it would check. */
function accepts(rule: StringRule, value: string): boolean {
  const length = [...value].length;
  if (rule.minLength !== undefined && length < rule.minLength) return false;
  if (rule.maxLength !== undefined && length > rule.maxLength) return false;
  return rule.pattern === undefined || new RegExp(rule.pattern, 'u').test(value);
}

const DAY_MS = 86_400_000;

/** Lifetimes beyond 3650 days: the first two once answered 500, the third 400 for the wrong reason. */
const TOO_LONG = ['100000000d', '9000000000000s', '20000000w', '3651d', '522w', '87601h', '5256001m', '315360001s'];
/** The longest lifetime of each unit, and other valid ones. */
const WITHIN = ['315360000s', '5256000m', '87600h', '3650d', '521w', '1s', '007d', '12 h'];

const NAMES_REFUSED = ['Fougère', 'naïve', '名前', 'tok_sneaky', 'bad name', '-dash', '.dot', 'x'.repeat(65), ''];
const NAMES_ACCEPTED = ['a', 'A.b_c-d', 'tok', 'toks', 'to_k', 'Tok_upper', 'tokx_', '9'.repeat(64)];

for (const backend of testBackends())
  describe(`token names and lifetimes [${backend.name}]`, () => {
    let h: Harness;
    before(async () => {
      h = await createHarness({ backend });
    });
    after(async () => {
      await h.close();
    });

    const create = (body: unknown) =>
      h.request({
        method: 'POST',
        url: '/tokens',
        headers: { ...json, ...bearer(h.tokens.all) },
        payload: JSON.stringify(body),
      });
    const names = async () =>
      (await h.request({ method: 'GET', url: '/tokens', headers: bearer(h.tokens.all) }))
        .json<{ name: string }[]>()
        .map((t) => t.name);

    it('refuses a lifetime beyond 3650 days with 400 naming expiresIn and the bound, and stores nothing', async () => {
      const rule = documented(h, 'expiresIn');
      for (const expiresIn of TOO_LONG) {
        assert.equal(accepts(rule, expiresIn), false, `the document's pattern refuses ${expiresIn}`);
        const refused = assertError(await create({ name: 'long-lived', expiresIn }), Errors.INVALID_FIELD);
        assert.match(refused.message, /^expiresIn .*3650d/, `${expiresIn}: ${refused.message}`);
      }
      assert.ok(!(await names()).includes('long-lived'), 'a refused token is not stored');
      const created = await create({ name: 'long-lived', expiresIn: '3650d' });
      assert.equal(created.statusCode, 201, created.body);
      const { createdAt, expiresAt } = created.json<{ createdAt: string; expiresAt: string }>();
      assert.equal(Date.parse(expiresAt) - Date.parse(createdAt), 3650 * DAY_MS);
    });

    it("accepts every lifetime the document's pattern accepts, up to each unit's longest", async () => {
      const rule = documented(h, 'expiresIn');
      for (const [i, expiresIn] of WITHIN.entries()) {
        assert.ok(accepts(rule, expiresIn), `the document's pattern accepts ${expiresIn}`);
        const created = await create({ name: `within-${i}`, expiresIn });
        assert.equal(created.statusCode, 201, `${expiresIn}: ${created.body}`);
      }
      for (const expiresIn of ['0d', '0s', '-1d', '1y', '1.5d', ' 1d']) {
        assert.equal(accepts(rule, expiresIn), false, `the document's pattern refuses ${expiresIn}`);
        assertError(await create({ name: 'never', expiresIn }), Errors.INVALID_FIELD, /^expiresIn /);
      }
    });

    it('states the name rule in the document: a name it accepts is accepted, one it refuses gets 400 naming name', async () => {
      const rule = documented(h, 'name');
      assert.ok(rule.pattern !== undefined, 'NewToken.name has a pattern');
      for (const name of NAMES_REFUSED) {
        assert.equal(accepts(rule, name), false, `the document refuses '${name}'`);
        assertError(await create({ name }), Errors.INVALID_FIELD, /^name /);
      }
      for (const name of NAMES_ACCEPTED) {
        assert.ok(accepts(rule, name), `the document accepts '${name}'`);
        const created = await create({ name, scopes: ['plants:read'] });
        assert.equal(created.statusCode, 201, `'${name}': ${created.body}`);
      }
    });

    it("accepts any name generated from the document's pattern and length", async () => {
      const rule = documented(h, 'name');
      assert.ok(rule.pattern !== undefined, 'NewToken.name has a pattern');
      const seen = new Set(await names());
      const generated = fc
        .stringMatching(new RegExp(rule.pattern))
        .filter((name) => accepts(rule, name) && name.length >= 1 && !seen.has(name));
      await fc.assert(
        fc.asyncProperty(generated, async (name) => {
          seen.add(name);
          const created = await create({ name, scopes: ['plants:read'] });
          assert.equal(created.statusCode, 201, `'${name}': ${created.body}`);
        }),
        { numRuns: 40 },
      );
    });

    it('plantstore token create keeps to the same bound and name rule, storing nothing it refuses', async () => {
      const env = { DATABASE_URL: h.databaseUrl };
      for (const expiresIn of ['100000000d', '9000000000000s', '20000000w']) {
        const result = await runCli(
          ['token', 'create', '--name', 'cli-long', '--expires-in', expiresIn],
          env,
          fromSource(),
        );
        assert.notEqual(result.code, 0, expiresIn);
        assert.match(result.stderr, /--expires-in .*3650d/, `${expiresIn}: ${result.stderr}`);
      }
      const name = await runCli(['token', 'create', '--name', 'Fougère'], env, fromSource());
      assert.notEqual(name.code, 0);
      assert.match(name.stderr, /invalid token name 'Fougère'/);
      assert.ok(!(await names()).includes('cli-long'), 'a refused token is not stored');
      const created = await runCli(
        ['token', 'create', '--name', 'cli-long', '--expires-in', '521w'],
        env,
        fromSource(),
      );
      assert.equal(created.code, 0, created.stderr);
    });
  });
