/**
 * The OpenAPI 3.1 document, built from the operations the app registers and the
 * schemas they validate with, plus the error catalogue. It keeps the seed's shapes
 * (NewPlant, Plant, Error, bearerAuth, version 1.0.0, MIT) and adds every status,
 * limit and decision of ours.
 */
import { Errors, type CatalogueEntry, type ErrorName } from './errors.js';
import type { OperationSpec, ParameterSpec } from './operation.js';
import { LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT } from '../plants/routes.js';
import { NewPlant, Plant, StoredPlant } from '../plants/schemas.js';
import { REALM } from './auth.js';
import { RATE_LIMIT_HEADERS, RETRY_AFTER_HEADER } from './rate-limit-headers.js';
import type { ServiceLimits } from '../config/service-limits.js';
import { DEFAULT_RETRY_SCHEDULE, parseRetrySchedule } from '../config/retry-schedule.js';
import { webhookComponents, webhookEvents, webhooksTag, type WebhookDocumentSettings } from '../webhooks/openapi.js';

const DEFAULT_WEBHOOK_SETTINGS: WebhookDocumentSettings = { timeoutMs: 10_000, retrySchedule: parseRetrySchedule(DEFAULT_RETRY_SCHEDULE) };

const catalogue = Object.entries(Errors) as [ErrorName, CatalogueEntry][];

export const ErrorSchema = {
  type: 'object',
  required: ['error', 'message'],
  properties: {
    error: {
      type: 'integer',
      format: 'int32',
      description: 'Numeric error value, from the error catalogue (see the API description): stable, never reused.',
      enum: catalogue.map(([, entry]) => entry.code),
    },
    message: { type: 'string', description: 'Text describing the error: which field or header, and why.' },
  },
} as const;

const components: ReadonlyMap<object, string> = new Map<object, string>([
  [NewPlant, 'NewPlant'],
  [Plant, 'Plant'],
  [StoredPlant, 'StoredPlant'],
  [ErrorSchema, 'Error'],
  ...webhookComponents,
]);

/** Replaces component schemas (by identity) with $refs, at any depth. */
function withRefs(schema: unknown): unknown {
  if (schema === null || typeof schema !== 'object') return schema;
  const name = components.get(schema);
  if (name !== undefined) return { $ref: `#/components/schemas/${name}` };
  if (Array.isArray(schema)) return schema.map(withRefs);
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, withRefs(value)]));
}

export interface DocumentLimits {
  readonly bodyLimitBytes: number;
  /** The delivery timeout and retry schedule the `webhooks` section states (defaults when absent). */
  readonly webhooks?: WebhookDocumentSettings;
  /** Rate limits and protocol limits the description states (omitted when absent). */
  readonly service?: ServiceLimits;
}

/** The rate-limit and protocol-limit paragraph of the description (docs/security.md has the whole story). */
function serviceLimitsText(service: ServiceLimits | undefined): string[] {
  if (service === undefined) return [];
  const rate = service.rateLimitPerMinute === 0 && service.anonymousRateLimitPerMinute === 0
    ? 'Rate limiting is off on this server.'
    : `Each token may make ${service.rateLimitPerMinute || 'unlimited'} requests a minute; requests without a valid token, ` +
      `${service.anonymousRateLimitPerMinute || 'unlimited'} a minute per client address.`;
  return [
    '',
    `**Rate limits.** ${rate} Over the limit, a request gets 429 RATE_LIMITED with \`Retry-After\`; while limiting is on,`,
    'every response carries `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` and `RateLimit-Policy`.',
    `A request head (request line and headers) over ${service.maxHeaderSizeBytes} bytes gets 431 HEADERS_TOO_LARGE; a client that takes`,
    `over ${service.headersTimeoutMs} ms to send its headers, or ${service.requestTimeoutMs} ms for the whole request, gets 408 REQUEST_TIMEOUT.`,
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

/** The failures an operation can produce: its own plus those its shape implies. */
export function failuresOf(operation: OperationSpec): ErrorName[] {
  const names = new Set<ErrorName>();
  if (operation.scope !== null) ['TOKEN_MISSING', 'TOKEN_INVALID', 'INSUFFICIENT_SCOPE'].forEach((n) => names.add(n as ErrorName));
  if (operation.body !== undefined) {
    ['INVALID_JSON', 'BODY_REQUIRED', 'BODY_NOT_OBJECT', 'INVALID_FIELD', 'BODY_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'].forEach((n) => names.add(n as ErrorName));
  }
  if ((operation.pathParams?.length ?? 0) + (operation.query?.length ?? 0) > 0) names.add('INVALID_PARAMETER');
  operation.errors.forEach((n) => names.add(n));
  // Every operation is rate limited when RATE_LIMIT (or RATE_LIMIT_ANONYMOUS) is set.
  names.add('RATE_LIMITED');
  // Any request can be malformed, too slow or too large at the protocol level.
  ['BAD_REQUEST', 'REQUEST_TIMEOUT', 'HEADERS_TOO_LARGE'].forEach((n) => names.add(n as ErrorName));
  names.add('INTERNAL');
  return [...names];
}

function errorResponses(operation: OperationSpec): Record<string, unknown> {
  const byStatus = new Map<number, ErrorName[]>();
  for (const name of failuresOf(operation)) {
    const { status } = Errors[name];
    byStatus.set(status, [...(byStatus.get(status) ?? []), name]);
  }
  const responses: Record<string, unknown> = {};
  for (const [status, names] of [...byStatus].sort(([a], [b]) => a - b)) {
    const lines = names.map((n) => `- \`${Errors[n].code}\` ${n}: ${markdownText(Errors[n].meaning)}`);
    const first = Errors[names[0] as ErrorName];
    const headers: Record<string, unknown> = {};
    if (status === 401 || status === 403) {
      headers['WWW-Authenticate'] = { description: `RFC 6750 challenge, realm "${REALM}".`, schema: { type: 'string' } };
    }
    if (status === 503) headers['Retry-After'] = { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } };
    if (status === 405) headers.Allow = { description: 'The methods this path has.', schema: { type: 'string' } };
    if (status === 429) Object.assign(headers, { 'Retry-After': RETRY_AFTER_HEADER }, RATE_LIMIT_HEADERS);
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

function parameter(where: 'path' | 'query', spec: ParameterSpec): unknown {
  return { name: spec.name, in: where, required: where === 'path' || spec.required === true, description: spec.description, schema: spec.schema };
}

function operationObject(operation: OperationSpec, limits: DocumentLimits): unknown {
  const { success } = operation;
  const parameters = [
    ...(operation.pathParams ?? []).map((p) => parameter('path', p)),
    ...(operation.query ?? []).map((p) => parameter('query', p)),
  ];
  const successContent = success.schema === undefined ? undefined : {
    [success.contentType ?? 'application/json']: { schema: success.schema, ...(success.example === undefined ? {} : { example: success.example }) },
  };
  return withRefs({
    operationId: operation.operationId,
    summary: operation.summary,
    description: operation.description,
    tags: operation.tags,
    security: operation.scope === null ? [] : [{ bearerAuth: [operation.scope] }],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(operation.body === undefined ? {} : {
      requestBody: {
        required: operation.bodyOptional !== true,
        description: `A JSON object, UTF-8, at most ${limits.bodyLimitBytes} bytes.`,
        content: { 'application/json': { schema: operation.body, example: operation.bodyExample } },
      },
    }),
    responses: {
      [String(success.status)]: {
        description: success.description,
        headers: { ...success.headers, ...RATE_LIMIT_HEADERS },
        ...(successContent === undefined ? {} : { content: successContent }),
      },
      ...errorResponses(operation),
    },
  });
}

function catalogueTable(): string {
  const rows = catalogue.map(([name, e]) => `| ${e.code} | ${e.status} | ${name} | ${markdownText(e.meaning)} |`);
  return ['| error | HTTP status | name | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

export function buildOpenApiDocument(operations: readonly OperationSpec[], limits: DocumentLimits): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const operation of operations) {
    paths[operation.path] ??= {};
    (paths[operation.path] as Record<string, unknown>)[operation.method.toLowerCase()] = operationObject(operation, limits);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Plant Store',
      version: '1.0.0',
      license: { name: 'MIT', identifier: 'MIT' },
      description: [
        'A store of plants. Clients create plants with a client-chosen int64 id, and list, read and delete them.',
        '',
        '**Authentication.** Every plant operation needs `Authorization: Bearer <token>`. Tokens are issued with',
        '`plantstore token create --name NAME --scopes plants:read,plants:write`. Scopes: `plants:read` (list, read),',
        '`plants:write` (create, delete), `admin` (webhooks and `/metrics`; it does not imply the others). Tokens themselves',
        'are managed with the `plantstore token` command, not over HTTP.',
        'A missing or bad token gets 401 with a `WWW-Authenticate: Bearer` challenge; a token without the scope gets 403.',
        '',
        `**Limits.** Request bodies: at most ${limits.bodyLimitBytes} bytes of UTF-8 JSON. Names: 1-200 characters; tags: 1-100.`,
        `List pages: 1-${LIST_MAX_LIMIT} plants (default ${LIST_DEFAULT_LIMIT}); follow the \`Link: rel="next"\` header for the rest.`,
        ...serviceLimitsText(limits.service),
        '',
        '**Ids are int64.** Ids travel as JSON numbers with all their digits; values above 2^53 need a JSON parser that',
        'keeps them exact (JavaScript: the typed client `plantstore/client` returns them as `bigint`).',
        '',
        '**Trying it.** The interactive reference at `/docs` sends real requests: paste a token under *Authentication*,',
        'open an operation and choose *Test Request*.',
        '',
        '**Errors.** Every failure carries an `Error` record `{"error": <code>, "message": <text>}`. A fault of the',
        'request is a 4xx (400 for a malformed one); a fault of the service is a 5xx (503 with `Retry-After` while the',
        'store is unreachable, 500 for a bug), so a client can tell a request to fix from one to retry. The codes:',
        '',
        catalogueTable(),
      ].join('\n'),
    },
    tags: [
      { name: 'plants', description: 'The plant resource.' },
      { name: 'service', description: 'Health and description of the service itself (no token needed).' },
      webhooksTag,
    ],
    paths,
    webhooks: withRefs(webhookEvents(limits.webhooks ?? DEFAULT_WEBHOOK_SETTINGS)),
    components: {
      schemas: Object.fromEntries([...components].map(([schema, name]) => [name, schema])),
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'An opaque Plant Store token (pst_...).' },
      },
    },
    security: [{ bearerAuth: [] }],
    'x-error-catalogue': catalogue.map(([name, e]) => ({ error: e.code, status: e.status, name, meaning: e.meaning })),
  };
}
