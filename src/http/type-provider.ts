/**
 * Handlers are typed from their route schemas (json-schema-to-ts), never by casts; int64 integers are typed as
 * `bigint`, which is what the validator hands on.
 */
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import type { FromSchemaOptions } from 'json-schema-to-ts';

type References = Exclude<FromSchemaOptions['references'], false | undefined>;

interface Int64AsBigint {
  pattern: { type: 'integer'; format: 'int64' };
  output: bigint;
}

interface SchemaOptions<Shared extends References> {
  references: Shared;
  deserialize: [Int64AsBigint];
}

/** A plugin whose routes are typed from their schemas, `$ref`s resolved among `Shared`. */
export type TypedRoutes<Shared extends References = []> = FastifyPluginAsyncJsonSchemaToTs<{
  ValidatorSchemaOptions: SchemaOptions<Shared>;
  SerializerSchemaOptions: SchemaOptions<Shared>;
}>;

interface JsonTextResponse {
  readonly description: string;
  readonly headers?: Readonly<Record<string, object>>;
  readonly content: { readonly 'application/json': { readonly schema: object } };
}

/**
 * A response sent as JSON text the handler already holds (a page the database serialised, the cached OpenAPI
 * document): the schema documents it, but Fastify passes a string on as it is, so it is typed as text.
 */
export function jsonText(
  description: string,
  schema: object,
  headers?: Readonly<Record<string, object>>,
): JsonTextResponse {
  return { description, ...(headers === undefined ? {} : { headers }), content: { 'application/json': { schema } } };
}

interface StreamedText {
  readonly description: string;
  readonly content: Readonly<Record<string, { readonly schema: object }>>;
}

/**
 * A request or response body streamed as text in one of several media types (an
 * import's NDJSON or CSV, an export). The schemas document each type; the handler
 * reads or sends a stream, so the body is not typed from them.
 */
export function streamedText(
  description: string,
  content: Readonly<Record<string, { readonly schema: object }>>,
): StreamedText {
  return { description, content };
}
