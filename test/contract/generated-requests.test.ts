/**
 * Requests generated from the served OpenAPI document, for every operation that answers at once: valid ones
 * (parameters and bodies drawn from their schemas) and invalid ones (one value broken against its schema). Every
 * answer must be documented and match the document (the harness checks each), none may be a 5xx, and an invalid
 * request must get a 400 Error record naming what is wrong. Seeded and bounded, on both stores, through inject.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { parse, stringify } from 'lossless-json';
import { Errors } from '../../src/http/errors.js';
import { issueToken } from '../../src/tokens/token-service.js';
import { testBackends } from '../support/backends.js';
import { bearer, createHarness, type Harness } from '../support/harness.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- a parsed JSON document

/** Cases per operation and kind (valid, invalid): a few hundred requests per operation and store. */
const RUNS = 100;
const SEED = 20261128;

/** Operations left out: the event stream never ends, and a webhook URL is resolved over DNS. */
const LEFT_OUT = new Set(['get /events', 'post /webhooks']);

/** A JSON value with int64 ids as bigint, written with every digit. */
function jsonText(value: unknown): string {
  if (typeof value === 'bigint') return String(value);
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.entries(value)
      .map(([key, v]) => `${JSON.stringify(key)}:${jsonText(v)}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

const TEXT_UNITS = fc.constantFrom(...'abcxyzABC019 -_.,é漢😍'.match(/./gu)!);

/** Values a schema admits (the subset of JSON Schema the document uses). */
function arbitraryOf(schema: Json, doc: Json): fc.Arbitrary<unknown> {
  if (typeof schema.$ref === 'string') return arbitraryOf(resolve(schema.$ref, doc), doc);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  if (Array.isArray(schema.oneOf) || Array.isArray(schema.anyOf))
    return fc.oneof(...(schema.oneOf ?? schema.anyOf).map((one: Json) => arbitraryOf(one, doc)));
  const types: string[] = Array.isArray(schema.type) ? schema.type : [schema.type ?? 'string'];
  return fc.oneof(...types.map((type) => arbitraryOfType(type, schema, doc)));
}

function arbitraryOfType(type: string, schema: Json, doc: Json): fc.Arbitrary<unknown> {
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      if (schema.format === 'int64') return fc.oneof(fc.bigInt(-(2n ** 63n), 2n ** 63n - 1n), fc.bigInt(-50n, 50n));
      return fc.integer({ min: schema.minimum ?? -(2 ** 31), max: schema.maximum ?? 2 ** 31 - 1 });
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'array':
      return fc.array(arbitraryOf(schema.items ?? {}, doc), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.min(schema.maxItems ?? 3, 3),
      });
    case 'object': {
      const properties: Json = schema.properties ?? {};
      const required = new Set<string>(schema.required ?? []);
      return fc.record(
        Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, arbitraryOf(value, doc)])),
        { requiredKeys: Object.keys(properties).filter((key) => required.has(key)) },
      );
    }
    default: {
      const min = schema.minLength ?? 0;
      const max = Math.min(schema.maxLength ?? 30, min + 30);
      const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern, 'u') : undefined;
      const text = fc.string({ unit: TEXT_UNITS, minLength: min, maxLength: max });
      if (pattern === undefined || pattern.test('abc')) return text.filter((s) => pattern?.test(s) ?? true);
      return fc.stringMatching(pattern).filter((s) => [...s].length >= min && [...s].length <= max);
    }
  }
}

function resolve(ref: string, doc: Json): Json {
  return ref
    .replace(/^#\//, '')
    .split('/')
    .reduce((node: Json, key) => node[key.replaceAll('~1', '/').replaceAll('~0', '~')], doc);
}

interface Request {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
}

interface Operation {
  readonly method: string;
  readonly path: string;
  readonly parameters: Json[];
  /** Request headers the operation declares (conditions, preferences, negotiation). */
  readonly headers: Json[];
  readonly body: Json | undefined;
  readonly bodyType: string | undefined;
  readonly security: boolean;
}

function operationsOf(doc: Json): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const [method, operation] of Object.entries<Json>(item)) {
      if (LEFT_OUT.has(`${method} ${path}`)) continue;
      const content: Json = operation.requestBody?.content ?? {};
      const bodyType = Object.keys(content).find((type) => type === 'application/json');
      operations.push({
        method: method.toUpperCase(),
        path,
        parameters: (operation.parameters ?? []).filter((p: Json) => p.in === 'path' || p.in === 'query'),
        headers: (operation.parameters ?? []).filter((p: Json) => p.in === 'header'),
        body: bodyType === undefined ? undefined : content[bodyType].schema,
        bodyType,
        security: Array.isArray(operation.security) && operation.security.length > 0,
      });
    }
  }
  return operations;
}

/** ETags near the versions the generated plants and subscriptions have, and the forms RFC 9110 allows. */
const ETAGS = fc.oneof(
  fc.constantFrom('*', 'W/"1"', '"1", "2"', '"0"', 'W/"2", "3"'),
  fc.integer({ min: 1, max: 4 }).map((n) => `"${n}"`),
);

/** Values for the request headers the document declares, by name: what a client sends, well-formed or not. */
const HEADER_VALUES: Record<string, fc.Arbitrary<string>> = {
  'if-match': ETAGS,
  'if-none-match': ETAGS,
  prefer: fc.constantFrom('count=exact', 'count=estimated', 'count=none', 'count=exact, wait=1', 'respond-async'),
  accept: fc.constantFrom(
    'application/x-ndjson',
    'text/csv',
    'text/csv;q=0',
    'application/json',
    '*/*',
    'text/*, application/x-ndjson;q=0.5',
  ),
};

/** Printable ASCII only: a header value outside it is refused by the HTTP layer before the app sees it. */
const headerValueOf = (p: Json, doc: Json): fc.Arbitrary<string> =>
  HEADER_VALUES[String(p.name).toLowerCase()] ??
  arbitraryOf(p.schema ?? {}, doc)
    .map(String)
    .filter((v) => /^[\x20-\x7e]*$/.test(v));

/** Path values that name something that exists (a fixture), mixed with generated ones, by operation path. */
type Fixtures = Readonly<Record<string, Readonly<Record<string, string>>>>;

/** A valid request of the operation: every path parameter, some query parameters, a body from its schema. */
function validRequest(operation: Operation, doc: Json, token: string, fixtures: Fixtures = {}): fc.Arbitrary<Request> {
  const fixed = fixtures[operation.path] ?? {};
  const parameters = Object.fromEntries(
    operation.parameters.map((p) => {
      const generated = arbitraryOf(p.schema, doc);
      const existing = fixed[p.name as string];
      const value = existing === undefined ? generated : fc.oneof(fc.constant(existing), generated);
      return [p.name, p.in === 'path' ? value : fc.option(value, { nil: undefined })];
    }),
  );
  const headerValues = Object.fromEntries(
    operation.headers.map((p) => [String(p.name), fc.option(headerValueOf(p, doc), { nil: undefined })]),
  );
  const body = operation.body === undefined ? fc.constant(undefined) : arbitraryOf(operation.body, doc);
  const inputs = { values: fc.record(parameters), sent: fc.record(headerValues), body };
  return fc.record(inputs).map(({ values, sent, body: value }) => {
    let url = operation.path;
    const query = new URLSearchParams();
    for (const p of operation.parameters) {
      const v: unknown = (values as Record<string, unknown>)[p.name as string];
      if (v === undefined) continue;
      if (p.in === 'path') url = url.replace(`{${p.name}}`, encodeURIComponent(String(v)));
      else for (const one of Array.isArray(v) ? v : [v]) query.append(p.name, String(one));
    }
    const search = query.toString();
    const headers: Record<string, string> = operation.security ? bearer(token) : {};
    for (const [name, v] of Object.entries(sent)) if (v !== undefined) headers[name] = v;
    if (value !== undefined) headers['content-type'] = 'application/json';
    return {
      method: operation.method,
      url: search === '' ? url : `${url}?${search}`,
      headers,
      ...(value === undefined ? {} : { payload: jsonText(value) }),
    };
  });
}

/** A value its schema refuses, or undefined when none is easy to write. */
function brokenValue(schema: Json, doc: Json, inUrl: boolean): fc.Arbitrary<unknown> | undefined {
  if (typeof schema.$ref === 'string') return brokenValue(resolve(schema.$ref, doc), doc, inUrl);
  if (Array.isArray(schema.enum)) return fc.constantFrom('zzz', 'Ungültig');
  const types: string[] = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('integer'))
    return fc.constantFrom(...(inUrl ? ['abc', '1.5', '0x10', '99999999999999999999', ''] : ['"1"', 1.5, true]));
  if (types.includes('string') && !types.includes('null')) {
    const options: unknown[] = inUrl ? [] : [12, true, ['x']];
    if (typeof schema.maxLength === 'number') options.push('x'.repeat(schema.maxLength + 1));
    if (typeof schema.minLength === 'number' && schema.minLength > 0) options.push('');
    if (schema.pattern === '^[^\\u0000-\\u001F\\u007F-\\u009F]*$') options.push('a\u0001b');
    return options.length === 0 ? undefined : fc.constantFrom(...options);
  }
  return undefined;
}

/** An invalid request: a valid one with one parameter or body property broken, or a body that is not an object. */
function invalidRequest(operation: Operation, doc: Json, token: string): fc.Arbitrary<Request> | undefined {
  const breakers: fc.Arbitrary<(request: Request) => Request>[] = [];
  for (const p of operation.parameters) {
    const broken = brokenValue(p.schema, doc, true);
    if (broken === undefined) continue;
    breakers.push(
      broken.map((value) => (request: Request) => {
        const [path, search = ''] = request.url.split('?');
        if (p.in === 'path') {
          const template = new RegExp(operation.path.replace(/\{[^}]+\}/g, '([^/]+)'));
          const names = [...operation.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
          const match = template.exec(path ?? '');
          const index = names.indexOf(p.name);
          const segments = match === null ? [] : match.slice(1);
          segments[index] = encodeURIComponent(String(value));
          let url = operation.path;
          names.forEach((name, i) => (url = url.replace(`{${name}}`, segments[i] ?? '1')));
          return { ...request, url: search === '' ? url : `${url}?${search}` };
        }
        const query = new URLSearchParams(search);
        query.delete(p.name);
        query.set(p.name, String(value));
        return { ...request, url: `${path}?${query.toString()}` };
      }),
    );
  }
  // A request header the document gives a pattern (If-Match, If-None-Match: RFC 9110's entity-tag list), broken.
  for (const p of operation.headers) {
    if (typeof p.schema?.pattern !== 'string') continue;
    const pattern = new RegExp(p.schema.pattern, 'u');
    const malformed = ['$', '1', '"a', 'w/"1"', '"1" "2"', '*, "1"'].filter((value) => !pattern.test(value));
    if (malformed.length === 0) continue;
    breakers.push(
      fc
        .constantFrom(...malformed)
        .map((value) => (r: Request) => ({ ...r, headers: { ...r.headers, [p.name]: value } })),
    );
  }
  const body = operation.body === undefined ? undefined : resolveBody(operation.body, doc);
  if (body !== undefined) {
    breakers.push(
      fc.constantFrom('[1]', '"plant"', '{"name":', '{').map((text) => (r: Request) => ({ ...r, payload: text })),
    );
    for (const [key, schema] of Object.entries<Json>(body.properties ?? {})) {
      const broken = brokenValue(schema, doc, false);
      if (broken === undefined) continue;
      breakers.push(
        broken.map((value) => (request: Request) => {
          // Lossless: a long id stays the number it was, and digits inside a string stay text.
          const parsed = parse(request.payload ?? '{}') as Json;
          return { ...request, payload: stringify({ ...parsed, [key]: value }) };
        }),
      );
    }
    for (const key of body.required ?? []) {
      breakers.push(
        fc.constant((request: Request) => {
          const parsed = parse(request.payload ?? '{}') as Json;
          delete parsed[key];
          return { ...request, payload: stringify(parsed) };
        }),
      );
    }
  }
  if (breakers.length === 0) return undefined;
  return fc
    .tuple(validRequest(operation, doc, token), fc.oneof(...breakers))
    .map(([request, breaking]) => breaking(request));
}

function resolveBody(schema: Json, doc: Json): Json | undefined {
  const resolved = typeof schema.$ref === 'string' ? resolve(schema.$ref, doc) : schema;
  return resolved.type === 'object' || (Array.isArray(resolved.type) && resolved.type.includes('object'))
    ? resolved
    : undefined;
}

/**
 * A subscription and a token the generated requests can reach (a generated id never names one). The subscription
 * points at a literal loopback address: nothing is resolved over DNS, and the SSRF policy refuses to deliver there.
 */
const WEBHOOK = 'whk_0123456789abcdef01234567';
const webhookPaths = ['/webhooks/{id}', '/webhooks/{id}/rotate-secret', '/webhooks/{id}/deliveries'];
const WEBHOOK_PATHS = [...webhookPaths, '/webhooks/{id}/recover', '/webhooks/{id}/test'];

/** The fixtures, put back: an operation before may have deleted the subscription; a token is new each time. */
async function fixtures(h: Harness, round: number): Promise<Fixtures> {
  const found = await h.request({ method: 'GET', url: `/webhooks/${WEBHOOK}`, headers: bearer(h.tokens.all) });
  if (found.statusCode === 404)
    await h.store.webhooks.insertSubscription({
      id: WEBHOOK,
      url: 'http://127.0.0.1:9/hook',
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      eventTypes: ['plant.created'],
      createdAt: new Date(),
    });
  const doomed = `doomed-${round}`;
  await issueToken(h.store.tokens, { name: doomed, scopes: ['plants:read'] });
  return {
    ...Object.fromEntries(WEBHOOK_PATHS.map((path) => [path, { id: WEBHOOK }])),
    '/tokens/{idOrName}': { idOrName: doomed },
  };
}

const REFUSALS = new Set<number>(
  [
    Errors.INVALID_JSON,
    Errors.BODY_NOT_OBJECT,
    Errors.INVALID_FIELD,
    Errors.INVALID_PARAMETER,
    Errors.BODY_REQUIRED,
  ].map((entry) => entry.code),
);

for (const backend of testBackends()) {
  describe(`requests generated from the document (${backend.name})`, () => {
    let h: Harness;
    let doc: Json;
    before(async () => {
      h = await createHarness({ backend });
      doc = (await h.request({ method: 'GET', url: '/openapi.json' })).json();
    });
    after(() => h.close());

    it('every operation answers valid requests as documented, never with a 5xx', async () => {
      for (const [round, operation] of operationsOf(doc).entries()) {
        const fixed = await fixtures(h, round);
        // An operation without inputs has one request to make; an import (one durable commit each) is costly.
        const inputs = operation.parameters.length > 0 || operation.body !== undefined;
        const runs = !inputs ? 2 : operation.path === '/plants/import' ? RUNS / 4 : RUNS;
        const started = Date.now();
        await fc.assert(
          fc.asyncProperty(validRequest(operation, doc, h.tokens.all, fixed), async (request) => {
            const response = await h.request(request);
            if (process.env.SAMPLE)
              console.log('VALID', request.method, request.url, request.payload, response.statusCode);
            assert.ok(
              response.statusCode < 500,
              `${request.method} ${request.url}: ${response.statusCode} ${response.body}`,
            );
          }),
          { seed: SEED, numRuns: runs },
        );
        if (process.env.SAMPLE) console.log('TIME', operation.method, operation.path, Date.now() - started);
      }
    });

    it('every operation refuses invalid requests with a 400 Error record', async () => {
      for (const operation of operationsOf(doc)) {
        const invalid = invalidRequest(operation, doc, h.tokens.all);
        if (invalid === undefined) continue;
        await fc.assert(
          fc.asyncProperty(invalid, async (request) => {
            const response = await h.request(request);
            if (process.env.SAMPLE)
              console.log('INVALID', request.method, request.url, request.payload, response.statusCode);
            const what = `${request.method} ${request.url} ${request.payload ?? ''}: ${response.statusCode} ${response.body}`;
            assert.equal(response.statusCode, 400, what);
            assert.ok(REFUSALS.has((response.json() as { error: number }).error), what);
          }),
          { seed: SEED, numRuns: RUNS },
        );
      }
    });
  });
}
