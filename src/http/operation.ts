/**
 * An operation is declared once, as data: method, path, scope, schemas, statuses.
 * `registerOperation` turns it into a Fastify route (validation and serialisation
 * compiled from its schemas); the OpenAPI builder turns the same object into the
 * document. Neither can drift from the other.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import type { ErrorName } from './errors.js';
import type { Scope } from '../tokens/scopes.js';
import { requireScope } from './auth.js';
import { sendContinue } from './node-protocol.js';
import { checkQueryString } from './query-string.js';

export type JsonSchema = Readonly<Record<string, unknown>>;

export interface ParameterSpec {
  readonly name: string;
  readonly schema: JsonSchema;
  readonly description: string;
  readonly required?: boolean;
}

export interface ResponseHeaderSpec {
  readonly description: string;
  readonly schema: JsonSchema;
}

export interface OperationSpec {
  readonly operationId: string;
  readonly method: 'GET' | 'POST' | 'DELETE';
  /** OpenAPI-style path, e.g. `/plants/{id}`. */
  readonly path: string;
  readonly summary: string;
  readonly description: string;
  readonly tags: readonly string[];
  /** Scope the bearer token must carry; `null` for public operations. */
  readonly scope: Scope | null;
  readonly body?: JsonSchema;
  /** True when the body may be left out (its schema must then accept null: Fastify validates a missing body as null). */
  readonly bodyOptional?: boolean;
  readonly bodyExample?: unknown;
  readonly pathParams?: readonly ParameterSpec[];
  readonly query?: readonly ParameterSpec[];
  readonly success: {
    readonly status: 200 | 201 | 204;
    readonly description: string;
    readonly schema?: JsonSchema;
    readonly contentType?: string;
    readonly example?: unknown;
    readonly headers?: Readonly<Record<string, ResponseHeaderSpec>>;
  };
  /** Failures specific to this operation; the generic ones are derived from the spec. */
  readonly errors: readonly ErrorName[];
}

export interface Operation extends OperationSpec {
  readonly handler: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
}

function parametersSchema(params: readonly ParameterSpec[] | undefined): JsonSchema | undefined {
  if (params === undefined || params.length === 0) return undefined;
  return {
    type: 'object',
    properties: Object.fromEntries(params.map((p) => [p.name, p.schema])),
    required: params.filter((p) => p.required === true).map((p) => p.name),
  };
}

export function fastifyPath(openApiPath: string): string {
  return openApiPath.replace(/\{([^}]+)\}/g, ':$1');
}

/** The Fastify schema of an operation: only the parts it has (Fastify warns about empty ones). */
export function routeSchema(operation: Operation): Record<string, unknown> {
  const { success } = operation;
  const parts: Record<string, unknown> = {
    body: operation.body,
    params: parametersSchema(operation.pathParams),
    querystring: parametersSchema(operation.query),
    // Serialised by fast-json-stringify from the documented schema (bigint ids included).
    response: success.schema !== undefined && success.contentType === undefined ? { [success.status]: success.schema } : undefined,
  };
  return Object.fromEntries(Object.entries(parts).filter(([, value]) => value !== undefined));
}

export function registerOperation(app: FastifyInstance, operation: Operation): void {
  app.route({
    method: operation.method,
    url: fastifyPath(operation.path),
    onRequest: operation.scope === null ? [] : [requireScope(operation.scope)],
    preParsing: operation.body === undefined ? [] : [sendContinue],
    preValidation: operation.query === undefined ? [] : [checkQueryString(operation.query.map((parameter) => parameter.name))],
    schema: routeSchema(operation),
    handler: operation.handler as RouteHandlerMethod,
  });
}
