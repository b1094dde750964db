/**
 * The OpenAPI document's description (what `/docs` shows first) against the routes it describes, so that it cannot
 * go stale as they change. It once said tokens were managed "not over HTTP" while POST, GET and DELETE /tokens
 * existed, and named the client `plantstore/client` after it had become its own package.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { createHarness, type Harness } from '../support/harness.js';

interface Doc {
  readonly info: { readonly description: string };
  readonly paths: Record<string, Record<string, unknown>>;
}

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete'];

describe("the OpenAPI document's description", () => {
  let h: Harness;
  let doc: Doc;
  before(async () => {
    h = await createHarness();
    doc = (await h.request({ method: 'GET', url: '/openapi.json' })).json<Doc>();
  });
  after(() => h.close());

  it('names only operations the document has', () => {
    const named = [...doc.info.description.matchAll(/`(GET|HEAD|POST|PUT|PATCH|DELETE) (\/[^`\s?]*)/g)];
    assert.ok(named.length > 0, 'the description names no operation');
    for (const [, method, path] of named)
      assert.ok(doc.paths[path!]?.[method!.toLowerCase()] !== undefined, `${method} ${path} is not in the document`);
  });

  it('names every token operation and does not say tokens are managed only by the CLI', () => {
    const operations = Object.entries(doc.paths)
      .filter(([path]) => path === '/tokens' || path.startsWith('/tokens/{'))
      .flatMap(([path, item]) => METHODS.filter((method) => method in item).map((m) => `${m.toUpperCase()} ${path}`));
    assert.ok(operations.length >= 3, `token operations: ${operations.join(', ')}`);
    for (const operation of operations)
      assert.ok(doc.info.description.includes(`\`${operation}\``), `the description does not name ${operation}`);
    assert.doesNotMatch(doc.info.description, /not over HTTP/);
  });

  it("names the typed client by its package's name", () => {
    const client = (
      JSON.parse(readFileSync(new URL('../../packages/client/package.json', import.meta.url), 'utf8')) as {
        name: string;
      }
    ).name;
    assert.ok(doc.info.description.includes(`\`${client}\``), `the description does not name ${client}`);
    assert.doesNotMatch(doc.info.description, /`plantstore\/client`/);
  });
});
