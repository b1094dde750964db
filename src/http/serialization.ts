/**
 * Response serialisers compiled with only the shared schemas a response refers to: Fastify's factory hands
 * every compile all of them, which slowed start-up (bench/README.md, "Start-up after the redesign").
 */
import type { FastifyServerOptions } from 'fastify';
import fastJson, { type Schema } from 'fast-json-stringify';

type Schemas = Readonly<Record<string, Schema>>;
type SerializerFactory = NonNullable<
  NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']
>['buildSerializer'];

/** The `$ref`s in a schema, as the ids of shared schemas (`StoredPlant`, `Error#/...` -> `Error`). */
function refsOf(node: unknown, found: Set<string>): void {
  if (Array.isArray(node)) {
    for (const item of node) refsOf(item, found);
  } else if (typeof node === 'object' && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') found.add(value.split('#')[0] ?? '');
      else refsOf(value, found);
    }
  }
}

/** The shared schemas `schema` refers to, directly or through one another. */
export function referencedSchemas(schema: Schema, shared: Schemas): Record<string, Schema> {
  const ids = new Set<string>();
  refsOf(schema, ids);
  const picked: Record<string, Schema> = {};
  for (const id of ids) {
    const referenced = shared[id];
    if (referenced === undefined || id in picked) continue;
    picked[id] = referenced;
    refsOf(referenced, ids);
  }
  return picked;
}

function buildSerializer(shared: Schemas = {}, options: object = {}) {
  return ({ schema }: { schema: Schema }) =>
    fastJson(schema, { ...options, schema: referencedSchemas(schema, shared) });
}

/** For Fastify's `schemaController.compilersFactory.buildSerializer`. */
export const serializerFactory = buildSerializer as unknown as SerializerFactory;
