/**
 * The OpenAPI 3.1 document, built by @fastify/swagger from the routes' and shared schemas. Added here once
 * for all routes: the failures each route's shape implies (documented from the error catalogue), rate-limit
 * headers, the body limit, the description, the `webhooks` section and `x-error-catalogue`.
 */
import type { SwaggerOptions } from '@fastify/swagger';
import type { FastifySchema } from 'fastify';
import type { Config } from '../config/index.js';
import type { ServiceLimits } from '../config/service-limits.js';
import { Errors, type CatalogueEntry, type ErrorName } from '../http/errors.js';
import { RATE_LIMIT_HEADERS, RETRY_AFTER_HEADER } from '../http/rate-limit-headers.js';
import { LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT } from '../plants/list-route.js';
import { REALM } from '../tokens/auth.js';
import { webhookEvents, webhooksTag } from '../webhooks/openapi.js';

const catalogue = Object.entries(Errors) as [ErrorName, CatalogueEntry][];

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The rate-limit and protocol-limit paragraph of the description (docs/security.md has the whole story). */
function serviceLimitsText(service: ServiceLimits, importMinBytesPerSecond: number): string[] {
  const rate =
    service.rateLimitPerMinute === 0 && service.anonymousRateLimitPerMinute === 0
      ? 'Rate limiting is off on this server.'
      : `Each token may make ${service.rateLimitPerMinute || 'unlimited'} requests a minute; requests without a valid token, ` +
        `${service.anonymousRateLimitPerMinute || 'unlimited'} a minute per client address.`;
  return [
    '',
    `**Rate limits.** ${rate} Over the limit, a request gets 429 RATE_LIMITED with \`Retry-After\`; while limiting is on,`,
    'every response carries `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` and `RateLimit-Policy`.',
    `A request head (request line and headers) over ${service.maxHeaderSizeBytes} bytes gets 431 HEADERS_TOO_LARGE; a client that takes`,
    `over ${service.headersTimeoutMs} ms to send its headers, or ${service.requestTimeoutMs} ms for the whole request, gets 408 REQUEST_TIMEOUT`,
    `(an import's body may take longer while it arrives at ${importMinBytesPerSecond} bytes/s or more).`,
    'Both close the connection.',
  ];
}

/**
 * Catalogue text shown as Markdown (descriptions are rendered by /docs): `<token>`
 * would otherwise be taken for an HTML tag and vanish; `|` would split a table cell.
 */
function markdownText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\|/g, '\\|');
}

/** The failures a route can produce: its own plus those its shape implies. */
export function failuresOf(schema: FastifySchema, own: readonly ErrorName[]): ErrorName[] {
  const names = new Set<ErrorName>();
  // A token is looked up in the store, so a secured operation answers 503 when the store does not answer.
  if (Array.isArray(schema.security) && schema.security.length > 0)
    (['TOKEN_MISSING', 'TOKEN_INVALID', 'INSUFFICIENT_SCOPE', 'STORE_UNAVAILABLE'] as const).forEach((n) =>
      names.add(n),
    );
  if (schema.body !== undefined) {
    (
      [
        'INVALID_JSON',
        'BODY_REQUIRED',
        'BODY_NOT_OBJECT',
        'INVALID_FIELD',
        'BODY_TOO_LARGE',
        'UNSUPPORTED_MEDIA_TYPE',
      ] as const
    ).forEach((n) => names.add(n));
  }
  if (schema.params !== undefined || schema.querystring !== undefined) names.add('INVALID_PARAMETER');
  own.forEach((n) => names.add(n));
  // Every operation is rate limited when RATE_LIMIT (or RATE_LIMIT_ANONYMOUS) is set.
  names.add('RATE_LIMITED');
  // Any request can be malformed, too slow or too large at the protocol level.
  (['BAD_REQUEST', 'REQUEST_TIMEOUT', 'HEADERS_TOO_LARGE'] as const).forEach((n) => names.add(n));
  names.add('INTERNAL');
  return [...names];
}

/** Response headers the service sends on every answer that documents them (so they are marked `required`). */
const ALWAYS_SENT = new Set(['ETag', 'Location']);

function errorResponses(failures: readonly ErrorName[], method: string): Json {
  const byStatus = new Map<number, ErrorName[]>();
  for (const name of failures) {
    const { status } = Errors[name];
    byStatus.set(status, [...(byStatus.get(status) ?? []), name]);
  }
  const responses: Json = {};
  for (const [status, names] of [...byStatus].sort(([a], [b]) => a - b)) {
    const lines = names.map((n) => `- \`${Errors[n].code}\` ${n}: ${markdownText(Errors[n].meaning)}`);
    const first = Errors[names[0] as ErrorName];
    const headers: Json = {};
    if (status === 401 || status === 403) {
      headers['WWW-Authenticate'] = {
        description: `RFC 6750 challenge, realm "${REALM}".`,
        required: true,
        schema: { type: 'string' },
      };
    }
    if (status === 503) headers['Retry-After'] = { ...RETRY_AFTER_HEADER, required: true };
    if (status === 405)
      headers.Allow = { description: 'The methods this path has.', required: true, schema: { type: 'string' } };
    if (status === 429)
      Object.assign(headers, { 'Retry-After': { ...RETRY_AFTER_HEADER, required: true } }, RATE_LIMIT_HEADERS);
    if (status === 415 && method === 'patch') headers['Accept-Patch'] = { ...ACCEPT_PATCH_HEADER, required: true };
    responses[String(status)] = {
      description: lines.join('\n'),
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      content: {
        'application/json': {
          schema: { $ref: '#/components/schemas/Error' },
          example: { error: first.code, message: first.meaning },
        },
      },
    };
  }
  return responses;
}

/** The first of `examples` beside a `$ref` (the library resolves the reference and drops its siblings). */
function refExample(schema: unknown): unknown {
  return isObject(schema) && schema.$ref !== undefined && Array.isArray(schema.examples)
    ? schema.examples[0]
    : undefined;
}

/** The examples of a route's `$ref`'d body and responses, by where they go: `body`, or the status. */
function mediaExamples(schema: FastifySchema): Json {
  const examples: Json = { body: refExample(schema.body) };
  for (const [status, response] of Object.entries(isObject(schema.response) ? schema.response : {}))
    examples[status] = refExample(response);
  return Object.fromEntries(Object.entries(examples).filter(([, example]) => example !== undefined));
}

function setExample(content: unknown, example: unknown): void {
  const media = isObject(content) ? Object.values(content)[0] : undefined;
  if (isObject(media) && example !== undefined) media.example = example;
}

const ACCEPT_PATCH_HEADER = {
  description: 'The patch formats PATCH takes (RFC 5789): `application/merge-patch+json, application/json`.',
  schema: { type: 'string' },
} as const;

/** Marks the headers of a response that are always sent as `required`. */
function markRequiredHeaders(response: Json): void {
  if (!isObject(response.headers)) return;
  for (const [name, header] of Object.entries(response.headers))
    if (ALWAYS_SENT.has(name) && isObject(header)) header.required = true;
}

const SECURITY_SCHEMES = {
  bearerAuth: { type: 'http', scheme: 'bearer', description: 'An opaque Plant Store token (pst_...).' },
  eventTicket: {
    type: 'apiKey',
    in: 'query',
    name: 'ticket',
    description:
      'GET /events only: a single-stream ticket from POST /events/tickets (pet_...), for EventSource, in place of ' +
      'the bearer token.',
  },
} as const;

/**
 * The query parameters that carry a security alternative (GET /events' `ticket`). @fastify/swagger leaves a
 * parameter an apiKey scheme names out of `parameters`; where the operation has other alternatives (a bearer token),
 * a tool reading the scheme alone takes it for a required parameter. Shown as optional, with what it stands in for.
 */
function credentialParameters(schema: FastifySchema): Json[] {
  const alternatives = Array.isArray(schema.security) ? (schema.security as Json[]) : [];
  const query =
    isObject(schema.querystring) && isObject(schema.querystring.properties) ? schema.querystring.properties : {};
  if (alternatives.length < 2) return [];
  return alternatives.flatMap((alternative) =>
    Object.keys(alternative).flatMap((name) => {
      const scheme = Object.entries(SECURITY_SCHEMES).find(([key]) => key === name)?.[1];
      const property = scheme?.type === 'apiKey' && scheme.in === 'query' ? query[scheme.name] : undefined;
      if (scheme?.type !== 'apiKey' || !isObject(property)) return [];
      const { description, ...propertySchema } = property;
      return [
        {
          in: 'query',
          name: scheme.name,
          required: false,
          description:
            `${String(description)} One of the operation's security alternatives: needed only without the others ` +
            '(a request with an `Authorization: Bearer` token leaves it out; with both, the token is used).',
          schema: propertySchema,
        },
      ];
    }),
  );
}

/** What each operation gets beside what its route declares (see the file comment). */
function completeOperation(operation: Json, method: string, components: Json, bodyLimitBytes: number): void {
  const failures = operation['x-failures'];
  const examples = isObject(operation['x-examples']) ? operation['x-examples'] : {};
  const itemSchemas = isObject(operation['x-item-schemas']) ? operation['x-item-schemas'] : {};
  const responseItemSchemas = isObject(operation['x-response-item-schemas'])
    ? operation['x-response-item-schemas']
    : {};
  delete operation['x-failures'];
  delete operation['x-examples'];
  delete operation['x-item-schemas'];
  delete operation['x-response-item-schemas'];
  const credentials = Array.isArray(operation['x-credential-parameters']) ? operation['x-credential-parameters'] : [];
  delete operation['x-credential-parameters'];
  if (credentials.length > 0)
    operation.parameters = [...(Array.isArray(operation.parameters) ? operation.parameters : []), ...credentials];
  const responses = isObject(operation.responses) ? operation.responses : {};
  for (const [status, response] of Object.entries(responses)) {
    if (isObject(response)) markRequiredHeaders(response);
    if (!status.startsWith('2') || !isObject(response)) continue;
    response.headers = { ...(isObject(response.headers) ? response.headers : {}), ...RATE_LIMIT_HEADERS };
    setExample(response.content, examples[status]);
  }
  // OpenAPI 3.2's itemSchema, as an extension in 3.1: the schema of one message of a streamed 200.
  const ok = responses['200'];
  for (const [mediaType, itemSchema] of Object.entries(responseItemSchemas)) {
    const media = isObject(ok) && isObject(ok.content) ? ok.content[mediaType] : undefined;
    if (isObject(media)) media['x-itemSchema'] = itemSchema;
  }
  operation.responses = {
    ...responses,
    ...errorResponses(Array.isArray(failures) ? (failures as ErrorName[]) : [], method),
  };
  const body = operation.requestBody;
  if (isObject(body)) {
    // A streamed body (an import's NDJSON or CSV) keeps the description its route gives it.
    if (isObject(body.content) && 'application/json' in body.content)
      body.description = `A JSON object, UTF-8, at most ${bodyLimitBytes} bytes.`;
    setExample(body.content, examples.body);
    for (const [mediaType, itemSchema] of Object.entries(itemSchemas)) {
      const media = isObject(body.content) ? body.content[mediaType] : undefined;
      if (isObject(media)) media['x-itemSchema'] = itemSchema;
    }
    // A body whose schema admits null may be left out (Fastify validates a missing body as null).
    const media = isObject(body.content) ? body.content['application/json'] : undefined;
    const ref = isObject(media) && isObject(media.schema) ? media.schema.$ref : undefined;
    const schema = typeof ref === 'string' ? components[ref.replace('#/components/schemas/', '')] : undefined;
    body.required = !(isObject(schema) && Array.isArray(schema.type) && schema.type.includes('null'));
  }
}

function catalogueTable(): string {
  const rows = catalogue.map(([name, e]) => `| ${e.code} | ${e.status} | ${name} | ${markdownText(e.meaning)} |`);
  return ['| error | HTTP status | name | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

function description(config: Config): string {
  return [
    'A store of plants. Clients create plants with a client-chosen int64 id, and list, find, read, change and delete them, or import and export them in bulk.',
    '',
    '**Authentication.** Every plant operation needs `Authorization: Bearer <token>`. Tokens are issued with',
    '`plantstore token create --name NAME --scopes plants:read,plants:write`, or over HTTP with an `admin` token:',
    '`POST /tokens` issues one, `GET /tokens` lists them, `DELETE /tokens/{idOrName}` revokes one (the console at `/console`',
    'does the same). Scopes: `plants:read` (list, find, read, export), `plants:write` (create, change, delete, import),',
    '`admin` (webhooks, tokens and `/metrics`; it does not imply the others).',
    'A missing or bad token gets 401 with a `WWW-Authenticate: Bearer` challenge; a token without the scope gets 403.',
    '',
    `**Limits.** Request bodies: at most ${config.bodyLimitBytes} bytes of UTF-8 JSON; an import (\`POST /plants/import\`, streamed) at most ${config.importLimitBytes} bytes. Names: 1-200 characters; tags: 1-100.`,
    `List pages: 1-${LIST_MAX_LIMIT} plants (default ${LIST_DEFAULT_LIMIT}); follow the \`Link: rel="next"\` header for the rest.`,
    ...serviceLimitsText(config.limits, config.importMinBytesPerSecond),
    '',
    '**Ids are int64.** Ids travel as JSON numbers with all their digits; values above 2^53 need a JSON parser that',
    'keeps them exact (JavaScript: the typed client `@plantstore/client` returns them as `bigint`).',
    '',
    '**Trying it.** The interactive reference at `/docs` sends real requests: paste a token under *Authentication*,',
    'open an operation and choose *Test Request*.',
    '',
    '**Errors.** Every failure carries an `Error` record `{"error": <code>, "message": <text>}`. A fault of the',
    'request is a 4xx (400 for a malformed one); a fault of the service is a 5xx (503 with `Retry-After` while the',
    'store is unreachable, 500 for a bug), so a client can tell a request to fix from one to retry. The codes:',
    '',
    catalogueTable(),
  ].join('\n');
}

export function openApiOptions(config: Config): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Plant Store',
        version: '1.0.0',
        license: { name: 'MIT', identifier: 'MIT' },
        description: description(config),
      },
      tags: [
        { name: 'plants', description: 'The plant resource.' },
        { name: 'service', description: 'Health and description of the service itself (no token needed).' },
        webhooksTag,
        { name: 'tokens', description: 'API tokens: create (the secret shown once), list, revoke (admin scope).' },
        {
          name: 'events',
          description:
            'The live change stream: every change of a plant, in order, resumable (Server-Sent Events; docs/events.md).',
        },
      ],
      webhooks: webhookEvents({ timeoutMs: config.webhookTimeoutMs, retrySchedule: config.webhookRetrySchedule }),
      components: { securitySchemes: SECURITY_SCHEMES },
      security: [{ bearerAuth: [] }],
    },
    // Shared schemas keep their own names under components (NewPlant, Error, ...).
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
    // Only the operations: not /docs, the 405 answers or CORS preflights.
    hideUntagged: true,
    transform: ({ schema, url, route }) => ({
      schema:
        schema === undefined
          ? schema
          : {
              ...schema,
              'x-failures': failuresOf(schema, route.config?.failures ?? []),
              'x-examples': mediaExamples(schema),
              ...(route.config?.bodyItemSchemas === undefined
                ? {}
                : { 'x-item-schemas': route.config.bodyItemSchemas }),
              ...(credentialParameters(schema).length === 0
                ? {}
                : { 'x-credential-parameters': credentialParameters(schema) }),
              ...(route.config?.responseItemSchemas === undefined
                ? {}
                : { 'x-response-item-schemas': route.config.responseItemSchemas }),
            },
      url,
    }),
    transformObject: (documentObject) => {
      if (!('openapiObject' in documentObject)) return documentObject.swaggerObject;
      const { openapiObject } = documentObject;
      const components =
        isObject(openapiObject.components) && isObject(openapiObject.components.schemas)
          ? openapiObject.components.schemas
          : {};
      const paths: unknown = openapiObject.paths;
      for (const path of Object.values(isObject(paths) ? paths : {})) {
        for (const [method, operation] of Object.entries(isObject(path) ? path : {})) {
          if (isObject(operation)) completeOperation(operation, method, components, config.bodyLimitBytes);
        }
      }
      return Object.assign(openapiObject, {
        'x-error-catalogue': catalogue.map(([name, e]) => ({
          error: e.code,
          status: e.status,
          name,
          meaning: e.meaning,
        })),
      });
    },
  };
}
