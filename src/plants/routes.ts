/**
 * The plant resource: create (the seed's operation), list, read and delete.
 * Handlers are thin: the store enforces uniqueness atomically; here we shape
 * requests and responses.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, Errors } from '../http/errors.js';
import { parseInt64Text } from '../http/int64.js';
import type { Operation } from '../http/operation.js';
import { PRINTABLE_TEXT } from '../http/text-rules.js';
import type { PlantRecord } from '../store/types.js';
import { Int64Id, NewPlant, Plant, StoredPlant, TAG_MAX_LENGTH } from './schemas.js';

export const LIST_DEFAULT_LIMIT = 100;
export const LIST_MAX_LIMIT = 1000;

interface NewPlantBody {
  id: number | bigint;
  name: string;
  tag?: string;
}

/** The create response: a `Plant`, so no id, and no tag key when there is no tag. */
function toPlant(plant: PlantRecord): { name: string; tag?: string } {
  return plant.tag === undefined ? { name: plant.name } : { name: plant.name, tag: plant.tag };
}

/** Path ids were validated by the schema; this only converts them. */
function pathId(request: FastifyRequest): bigint {
  return parseInt64Text((request.params as { id: string }).id) as bigint;
}

const idParameter = { name: 'id', schema: Int64Id, required: true, description: 'The plant id (an int64, in decimal).' };

export const createPlant: Operation = {
  operationId: 'createPlant',
  method: 'POST',
  path: '/plants',
  summary: 'Create a plant',
  description:
    'Creates a new plant in the store with the id the client chose. A 200 means the plant is durably committed.\n\n' +
    'Creating an id that exists already with the **same** name and tag is a safe retry: it answers 200 with the same body ' +
    'and changes nothing. With a different name or tag it answers 409. Properties not in `NewPlant` are ignored.',
  tags: ['plants'],
  scope: 'plants:write',
  body: NewPlant,
  bodyExample: { id: 10, name: 'Monstera deliciosa', tag: 'houseplant' },
  success: { status: 200, description: 'The plant was created (or this was a safe retry of its creation).', schema: Plant, example: { name: 'Monstera deliciosa', tag: 'houseplant' } },
  errors: ['PLANT_CONFLICT', 'STORE_UNAVAILABLE'],
  async handler(request) {
    const body = request.body as NewPlantBody;
    const plant: PlantRecord = body.tag === undefined
      ? { id: BigInt(body.id), name: body.name }
      : { id: BigInt(body.id), name: body.name, tag: body.tag };
    const outcome = await request.server.store.plants.createPlant(plant);
    if (outcome.kind === 'conflict') {
      throw new ApiError(
        Errors.PLANT_CONFLICT,
        `a plant with id ${plant.id} already exists with a different name or tag; delete it first or choose another id`,
      );
    }
    return toPlant(outcome.plant);
  },
};

export const listPlants: Operation = {
  operationId: 'listPlants',
  method: 'GET',
  path: '/plants',
  summary: 'List plants',
  description:
    'Returns plants in ascending id order, as a JSON array. Pages are keyset-paginated: when more plants follow, ' +
    'the `Link` header carries the next page\'s URL with `rel="next"` (RFC 8288); it is absent on the last page.',
  tags: ['plants'],
  scope: 'plants:read',
  query: [
    {
      name: 'limit',
      schema: { type: 'integer', format: 'int32', minimum: 1, maximum: LIST_MAX_LIMIT, default: LIST_DEFAULT_LIMIT },
      description: `Maximum number of results (1 to ${LIST_MAX_LIMIT}; default ${LIST_DEFAULT_LIMIT}).`,
    },
    { name: 'after', schema: Int64Id, description: 'Return only plants whose id is greater than this one (the cursor the Link header uses).' },
    { name: 'tag', schema: { type: 'string', minLength: 1, maxLength: TAG_MAX_LENGTH, pattern: PRINTABLE_TEXT }, description: 'Return only plants with exactly this tag.' },
  ],
  success: {
    status: 200,
    description: 'A page of plants.',
    schema: { type: 'array', items: StoredPlant },
    example: [{ id: 10, name: 'Monstera deliciosa', tag: 'houseplant' }],
    headers: {
      Link: { description: 'The next page, as `<url>; rel="next"`; absent on the last page.', schema: { type: 'string' } },
    },
  },
  errors: ['STORE_UNAVAILABLE'],
  async handler(request, reply: FastifyReply) {
    const query = request.query as { limit: number; after?: string; tag?: string };
    const after = query.after === undefined ? undefined : parseInt64Text(query.after);
    const page = await request.server.store.plants.listPlantsPage({ limit: query.limit, after, tag: query.tag });
    if (page.hasMore) {
      const next = new URLSearchParams({ limit: String(query.limit), after: String(page.lastId) });
      if (query.tag !== undefined) next.set('tag', query.tag);
      void reply.header('link', `</plants?${next.toString()}>; rel="next"`);
    }
    // Already JSON (built by the store), so Fastify sends it as it is.
    return reply.type('application/json; charset=utf-8').send(page.json);
  },
};

export const getPlant: Operation = {
  operationId: 'getPlant',
  method: 'GET',
  path: '/plants/{id}',
  summary: 'Read a plant',
  description: 'Returns one plant, with its id.',
  tags: ['plants'],
  scope: 'plants:read',
  pathParams: [idParameter],
  success: { status: 200, description: 'The plant.', schema: StoredPlant, example: { id: 10, name: 'Monstera deliciosa', tag: 'houseplant' } },
  errors: ['PLANT_NOT_FOUND', 'STORE_UNAVAILABLE'],
  async handler(request) {
    const id = pathId(request);
    const plant = await request.server.store.plants.getPlant(id);
    if (plant === undefined) throw new ApiError(Errors.PLANT_NOT_FOUND, `no plant has id ${id}`);
    return plant;
  },
};

export const deletePlant: Operation = {
  operationId: 'deletePlant',
  method: 'DELETE',
  path: '/plants/{id}',
  summary: 'Delete a plant',
  description: 'Deletes a plant. Its id is then free: creating it again is a fresh create.',
  tags: ['plants'],
  scope: 'plants:write',
  pathParams: [idParameter],
  success: { status: 204, description: 'The plant was deleted; the body is empty.' },
  errors: ['PLANT_NOT_FOUND', 'STORE_UNAVAILABLE'],
  async handler(request, reply: FastifyReply) {
    const id = pathId(request);
    if (!(await request.server.store.plants.deletePlant(id))) {
      throw new ApiError(Errors.PLANT_NOT_FOUND, `no plant has id ${id}`);
    }
    return reply.code(204).send();
  },
};

export const plantOperations: readonly Operation[] = [createPlant, listPlants, getPlant, deletePlant];
