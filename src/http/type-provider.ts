/**
 * Handlers are typed from their route schemas (json-schema-to-ts), never by casts.
 * A feature's routes declare which shared schemas their `$ref`s name; int64
 * integers are typed as `bigint`, which is what the validator hands on
 * (see the int64 keyword in validation.ts).
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
 * A response whose body the handler sends as JSON text it holds already (a list
 * page the database serialised, the cached OpenAPI document). The schema documents
 * it; handlers send a string, which Fastify passes on as it is (it serialises only
 * what is not text yet), so it is typed as text, not from the schema.
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
