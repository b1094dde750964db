/**
 * Every response a test receives, checked against the app's own OpenAPI document (the one GET /openapi.json
 * serves): the status is documented for the operation, the content type is one it lists, a JSON body matches the
 * response's schema, and every header marked `required` is there. The harness runs it around inject() and on the
 * app's server, so a real-socket test is checked too. Validators are compiled once per process and schema.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { FastifyInstance } from 'fastify';

type Json = Record<string, unknown>;
type Headers = Readonly<Record<string, string | string[] | number | undefined>>;

/** A response as the check sees it; `body` undefined when it was not captured (a stream cut short). */
export interface SeenResponse {
  readonly method: string;
  readonly url: string;
  readonly status: number;
  readonly headers: Headers;
  readonly body: string | undefined;
}

interface Operation {
  readonly method: string;
  readonly path: string;
  readonly pattern: RegExp;
  readonly templated: number;
  readonly responses: Json;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head'];

function operationsOf(doc: Json): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(isObject(doc.paths) ? doc.paths : {})) {
    if (!isObject(item)) continue;
    const source = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
    const templated = (path.match(/\{/g) ?? []).length;
    for (const method of METHODS) {
      const operation = item[method];
      if (isObject(operation) && isObject(operation.responses)) {
        operations.push({
          method,
          path,
          pattern: new RegExp(`^${source}$`),
          templated,
          responses: operation.responses,
        });
      }
    }
  }
  // A literal segment wins over a template (/plants/export before /plants/{id}), as in the router.
  return operations.sort((a, b) => a.templated - b.templated);
}

/** One Ajv per distinct set of components (every app of a run has the same), validators cached by schema. */
const checkers = new Map<string, { ajv: Ajv2020; validators: Map<string, ValidateFunction> }>();

function checkerFor(doc: Json): { ajv: Ajv2020; validators: Map<string, ValidateFunction> } {
  const components = JSON.stringify(doc.components ?? {});
  let checker = checkers.get(components);
  if (checker === undefined) {
    // OpenAPI 3.1 schemas are JSON Schema 2020-12; `example`, `x-...` and formats such as int64 are annotations here.
    const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
    ajv.addSchema({ $id: 'openapi', components: JSON.parse(components) as unknown });
    checker = { ajv, validators: new Map() };
    checkers.set(components, checker);
  }
  return checker;
}

function headerValue(headers: Headers, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(', ') : String(value);
}

const mediaTypeOf = (contentType: string): string => (contentType.split(';')[0] ?? '').trim().toLowerCase();

export class ContractCheck {
  private readonly operations: Operation[];
  private readonly checker: { ajv: Ajv2020; validators: Map<string, ValidateFunction> };

  constructor(doc: Json) {
    this.operations = operationsOf(doc);
    this.checker = checkerFor(doc);
  }

  static of(app: FastifyInstance): ContractCheck {
    return new ContractCheck(app.swagger() as unknown as Json);
  }

  private validator(schema: unknown): ValidateFunction {
    const text = JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/');
    let validate = this.checker.validators.get(text);
    if (validate === undefined) {
      validate = this.checker.ajv.compile(JSON.parse(text) as Json);
      this.checker.validators.set(text, validate);
    }
    return validate;
  }

  private bodyProblems(schema: unknown, body: string, where: string): string[] {
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch {
      return [`${where}: the body is not JSON: ${body.slice(0, 200)}`];
    }
    const validate = this.validator(schema);
    if (validate(value)) return [];
    const why = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`).join('; ');
    return [`${where}: the body does not match its schema (${why}): ${body.slice(0, 300)}`];
  }

  /** What is wrong with a response, by the document; empty when it is as documented. */
  problems(response: SeenResponse): string[] {
    const path = response.url.split('?')[0] ?? '';
    const method = response.method.toLowerCase();
    const status = String(response.status);
    const where = `${response.method} ${path} -> ${status}`;
    const atPath = this.operations.filter((op) => op.pattern.test(path));
    const wanted = method === 'head' ? 'get' : method;
    const operation = atPath.find((op) => op.method === wanted && op.pattern.test(path));
    const contentType = headerValue(response.headers, 'content-type');
    const body = response.body;
    if (operation === undefined) {
      // Not an operation (a 404, a 405, /docs...): a failure still is an Error record.
      if (response.status >= 400 && contentType !== undefined && mediaTypeOf(contentType) === 'application/json')
        return body === undefined || body === ''
          ? []
          : this.bodyProblems({ $ref: '#/components/schemas/Error' }, body, where);
      return [];
    }
    const documented =
      operation.responses[status] ?? operation.responses[`${status[0] ?? ''}XX`] ?? operation.responses.default;
    if (!isObject(documented)) return [`${where}: status ${status} is not documented for this operation`];
    const problems: string[] = [];
    // docs/security.md: API answers (JSON or empty) and exports are never stored by a cache.
    const stored =
      contentType === undefined || /^(application\/json|application\/x-ndjson|text\/csv)/.test(contentType);
    if (stored && headerValue(response.headers, 'cache-control') !== 'no-store')
      problems.push(
        `${where}: Cache-Control is ${headerValue(response.headers, 'cache-control') ?? 'missing'}, not no-store`,
      );
    for (const [name, header] of Object.entries(isObject(documented.headers) ? documented.headers : {})) {
      if (isObject(header) && header.required === true && headerValue(response.headers, name) === undefined)
        problems.push(`${where}: the required header ${name} is missing`);
    }
    const content = isObject(documented.content) ? documented.content : undefined;
    const empty = body === '' || response.status === 204 || response.status === 304 || method === 'head';
    if (response.status === 204 || response.status === 304) {
      if (body !== undefined && body !== '') problems.push(`${where}: has a body (${body.slice(0, 40)})`);
      if (headerValue(response.headers, 'content-length') !== undefined)
        problems.push(`${where}: has a Content-Length`);
      return problems;
    }
    if (content === undefined) {
      if (body !== undefined && body !== '' && method !== 'head')
        problems.push(`${where}: has a body it documents none of`);
      return problems;
    }
    if (contentType === undefined) {
      if (!empty) problems.push(`${where}: has no Content-Type`);
      return problems;
    }
    const mediaType = mediaTypeOf(contentType);
    const media = Object.entries(content).find(([key]) => mediaTypeOf(key) === mediaType)?.[1];
    if (!isObject(media)) {
      problems.push(`${where}: Content-Type ${contentType} is not one of ${Object.keys(content).join(', ')}`);
      return problems;
    }
    if (mediaType === 'application/json' && body !== undefined && !empty && media.schema !== undefined)
      problems.push(...this.bodyProblems(media.schema, body, where));
    return problems;
  }
}

const decoders: Record<string, (buffer: Buffer) => Buffer> = {
  gzip: gunzipSync,
  deflate: inflateSync,
  br: brotliDecompressSync,
};

/** A Content-Encoding header's value, as one string. */
export const encodingOf = (value: string | string[] | number | undefined): string | undefined =>
  value === undefined ? undefined : String(value);

/**
 * The body as the client reads it: a compressed one (the app compresses on request) decoded. Undefined (not
 * checked) when it cannot be: an empty body (HEAD) or a stream cut short carries the header without a whole stream.
 */
export function decoded(body: Buffer, encoding: string | undefined): string | undefined {
  const decode = encoding === undefined ? undefined : decoders[encoding.trim().toLowerCase()];
  if (decode === undefined || body.length === 0) return body.toString('utf8');
  try {
    return decode(body).toString('utf8');
  } catch {
    return undefined;
  }
}

/** The largest JSON body a socket response is kept for, to check. */
const CAPTURE_LIMIT = 4 * 1024 * 1024;

/**
 * Checks every response the app's server sends over a socket (inject() does not pass through it), handing each
 * problem to `report`. Installed first, so it sees a response from its first byte.
 */
export function checkServerResponses(
  app: FastifyInstance,
  check: ContractCheck,
  report: (problem: string) => void,
): void {
  app.server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let complete = true;
    const keep = (chunk: unknown, encoding?: unknown): void => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
      const type = response.getHeader('content-type') ?? written['content-type'];
      if (typeof type !== 'string' || !type.startsWith('application/json')) return;
      const buffer = Buffer.isBuffer(chunk)
        ? chunk
        : Buffer.from(chunk as string, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
      size += buffer.length;
      if (size > CAPTURE_LIMIT) complete = false;
      else chunks.push(buffer);
    };
    // Fastify hands most headers to writeHead(), which sends them without keeping them where getHeaders() looks.
    const written: Record<string, string | string[] | number | undefined> = {};
    const writeHead = response.writeHead.bind(response) as (...args: unknown[]) => ServerResponse;
    response.writeHead = ((...args: unknown[]) => {
      const given = args.find((arg) => typeof arg === 'object' && arg !== null);
      if (Array.isArray(given)) {
        for (let i = 0; i + 1 < given.length; i += 2) written[String(given[i]).toLowerCase()] = String(given[i + 1]);
      } else if (isObject(given)) {
        for (const [name, value] of Object.entries(given)) written[name.toLowerCase()] = value as string;
      }
      return writeHead(...args);
    }) as typeof response.writeHead;
    const write = response.write.bind(response) as (...args: unknown[]) => boolean;
    const end = response.end.bind(response) as (...args: unknown[]) => ServerResponse;
    response.write = ((...args: unknown[]) => {
      keep(args[0], args[1]);
      return write(...args);
    }) as typeof response.write;
    response.end = ((...args: unknown[]) => {
      keep(args[0], args[1]);
      return end(...args);
    }) as typeof response.end;
    response.once('finish', () => {
      const headers = { ...response.getHeaders(), ...written };
      const seen: SeenResponse = {
        method: request.method ?? 'GET',
        url: request.url ?? '/',
        status: response.statusCode,
        headers,
        body: complete ? decoded(Buffer.concat(chunks), headerValue(headers, 'content-encoding')) : undefined,
      };
      for (const problem of check.problems(seen)) report(problem);
    });
  });
}
