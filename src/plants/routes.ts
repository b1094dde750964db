/**
 * Creating and reading a plant (lists: list-route.ts; changes: change-routes.ts). Thin
 * handlers: the store enforces uniqueness atomically.
 */
import { CONTENT_FIELDS_AND, CONTENT_FIELDS_OR, EXAMPLE_CONTENT, examplePlant } from '../domain/plant-words.js';
import { failure } from '../http/errors.js';
import type { TypedRoutes } from '../http/type-provider.js';
import { recordOf } from '../domain/plant.js';
import { bearerAuth } from '../tokens/auth.js';
import { etagOf, noneMatchAny, noneMatchHits } from './preconditions.js';
import {
  ConditionalHeaders,
  ETagHeader,
  PlantPath,
  createdPlantJson,
  oneSmallAnswer,
  plantJson,
} from './route-parts.js';
import { NewPlant, Plant, StoredPlant } from './schemas.js';

const example = examplePlant(10);

export const plantRoutes: TypedRoutes<[typeof NewPlant, typeof Plant, typeof StoredPlant]> = async (app) => {
  app.post(
    '/plants',
    {
      schema: {
        operationId: 'createPlant',
        summary: 'Create a plant',
        description:
          'Creates a new plant in the store with the id the client chose. A 200 means the plant is durably committed.\n\n' +
          `Creating an id that exists already with the **same** ${CONTENT_FIELDS_AND} is a safe retry: it answers 200 with the ` +
          `same body and changes nothing. With a different ${CONTENT_FIELDS_OR} it answers 409. Properties not in \`NewPlant\` ` +
          'are ignored.\n\n' +
          `With \`If-None-Match: *\` it only creates: if the id exists at all, even with the same ${CONTENT_FIELDS_AND}, it answers 412 ` +
          "and changes nothing. The `ETag` header is the plant's version, for conditional changes.",
        tags: ['plants'],
        security: bearerAuth('plants:write'),
        headers: ConditionalHeaders.createOnly,
        body: { $ref: 'NewPlant', examples: [example] },
        response: {
          200: {
            $ref: 'Plant',
            description: 'The plant was created (or this was a safe retry of its creation).',
            headers: ETagHeader,
            examples: [EXAMPLE_CONTENT],
          },
        },
      },
      config: { failures: ['PLANT_CONFLICT', 'PRECONDITION_FAILED', 'STORE_UNAVAILABLE'] },
      ...oneSmallAnswer,
    },
    async (request, reply) => {
      // The body's own fields only: properties the schema does not list are ignored, not stored.
      const plant = recordOf(request.body);
      const { id } = plant;
      const outcome = await app.store.plants.createPlant(plant);
      if (outcome.kind !== 'created' && noneMatchAny(request.headers['if-none-match'])) {
        throw failure('PRECONDITION_FAILED', [
          `a plant with id ${id} exists, and If-None-Match: * asks to create only`,
        ]);
      }
      if (outcome.kind === 'conflict') throw failure('PLANT_CONFLICT', [id]);
      void reply.header('etag', etagOf(outcome.plant.version));
      return createdPlantJson(outcome.plant);
    },
  );

  app.get(
    '/plants/:id',
    {
      schema: {
        operationId: 'getPlant',
        summary: 'Read a plant',
        description:
          'Returns one plant, with its id, and its version as the `ETag` header. With `If-None-Match: <ETag>`, a plant still at ' +
          'that version answers 304 with no body.',
        tags: ['plants'],
        security: bearerAuth('plants:read'),
        params: PlantPath,
        headers: ConditionalHeaders.ifNoneMatch,
        response: {
          200: { $ref: 'StoredPlant', description: 'The plant.', headers: ETagHeader, examples: [example] },
          304: {
            type: 'null',
            description: 'Not modified: the plant is still at the version If-None-Match names.',
            headers: ETagHeader,
          },
        },
      },
      config: { failures: ['PLANT_NOT_FOUND', 'STORE_UNAVAILABLE'] },
      ...oneSmallAnswer,
    },
    async (request, reply) => {
      const { id } = request.params;
      const plant = await app.store.plants.getPlant(id);
      if (plant === undefined) throw failure('PLANT_NOT_FOUND', [id]);
      void reply.header('etag', etagOf(plant.version));
      if (noneMatchHits(request.headers['if-none-match'], plant.version)) return reply.code(304).send(null);
      return plantJson(plant);
    },
  );
};
