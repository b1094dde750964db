/**
 * PATCH, PUT and DELETE of a plant, conditional on If-Match (RFC 9110, section 13). The store
 * checks the precondition in the same write, so of clients writing the same version exactly
 * one wins and the others get 412.
 */
import { CONTENT_FIELDS_AND, CONTENT_FIELDS_OR, examplePlant, OPTIONAL_FIELDS_OR } from '../domain/plant-words.js';
import type { FastifyRequest } from 'fastify';
import { changeOf, replacementOf, versionMatches, type ExpectedVersion } from '../domain/plant.js';
import { failure, type ApiError } from '../http/errors.js';
import { MERGE_PATCH } from '../http/json-body.js';
import type { TypedRoutes } from '../http/type-provider.js';
import type { DeletePlantOutcome, UpdatePlantOutcome, VersionedPlant } from '../store/types.js';
import { bearerAuth } from '../tokens/auth.js';
import { etagOf, expectedByIfMatch, noneMatchForbids } from './preconditions.js';
import { ConditionalHeaders, ETagHeader, PlantPath, type PlantJson, oneSmallAnswer, plantJson } from './route-parts.js';
import type { PlantPatch, PlantReplacement, StoredPlant } from './schemas.js';

const example = examplePlant(10);

/** What If-Match asks of the write; a 428 first when this server requires one and none was sent. */
function expectation(request: FastifyRequest, required: boolean): ExpectedVersion | undefined {
  const header = request.headers['if-match'];
  if (required && header === undefined) throw failure('PRECONDITION_REQUIRED', [request.method]);
  return expectedByIfMatch(header);
}

/** The 412 or 404 of a write that did not happen. */
function refusal(
  id: bigint,
  outcome: { kind: 'not-found' } | { kind: 'precondition-failed'; current: VersionedPlant },
  expected: ExpectedVersion | undefined,
): ApiError {
  if (outcome.kind === 'precondition-failed') {
    return failure('PRECONDITION_FAILED', [
      `plant ${id} is at version ${etagOf(outcome.current.version)}, not one If-Match names; read it again and retry`,
    ]);
  }
  if (expected !== undefined)
    return failure('PRECONDITION_FAILED', [`no plant has id ${id}, so If-Match cannot match`]);
  return failure('PLANT_NOT_FOUND', [id]);
}

type WriteOutcome = UpdatePlantOutcome | DeletePlantOutcome;

/** How often a write conditional on If-None-Match reads the plant again when a concurrent change moved it on. */
const NONE_MATCH_ATTEMPTS = 3;

/**
 * A write under If-Match and If-None-Match (RFC 9110 13.2.2: If-Match first, then If-None-Match). The store checks only
 * If-Match, so If-None-Match is checked against the plant as read, and the write is pinned to that version: a change
 * made in between makes it read again rather than write past the condition.
 */
async function conditionalWrite<T extends WriteOutcome>(
  request: FastifyRequest,
  id: bigint,
  expected: ExpectedVersion | undefined,
  read: (id: bigint) => Promise<VersionedPlant | undefined>,
  write: (expected: ExpectedVersion | undefined) => Promise<T>,
): Promise<T> {
  const noneMatch = request.headers['if-none-match'];
  if (noneMatch === undefined) return write(expected);
  for (let attempt = 0; attempt < NONE_MATCH_ATTEMPTS; attempt++) {
    const current = await read(id);
    if (current === undefined || !versionMatches(expected, current.version)) return write(expected);
    if (noneMatchForbids(noneMatch, current.version)) {
      throw failure('PRECONDITION_FAILED', [
        `plant ${id} is at version ${etagOf(current.version)}, which If-None-Match names (or is *); nothing changed`,
      ]);
    }
    const outcome = await write([current.version]);
    if (outcome.kind !== 'precondition-failed') return outcome;
  }
  throw failure('PRECONDITION_FAILED', [
    `plant ${id} kept changing while If-None-Match was checked; read it and retry`,
  ]);
}

function sameId(pathId: bigint, bodyId: bigint | undefined): void {
  if (bodyId !== undefined && bodyId !== pathId)
    throw failure('INVALID_FIELD', [`id must be the id in the path (${pathId}), or be left out`]);
}

const changeFailures = [
  'PLANT_NOT_FOUND',
  'PRECONDITION_FAILED',
  'PRECONDITION_REQUIRED',
  'STORE_UNAVAILABLE',
] as const;

export const plantChangeRoutes: TypedRoutes<[typeof PlantPatch, typeof PlantReplacement, typeof StoredPlant]> = async (
  app,
) => {
  const required = app.config.requirePreconditions;
  const plants = () => app.store.plants;
  const read = (id: bigint) => plants().getPlant(id);
  const conditionally =
    `${required ? 'If-Match is required on this server (REQUIRE_PRECONDITIONS): without it the answer is 428. ' : ''}` +
    'With `If-Match: <ETag>` the change is made only if the plant is still at that version, else 412 and nothing changes ' +
    '(`If-Match: *`: any existing plant). Of concurrent writers sending the same ETag, exactly one succeeds. ' +
    '`If-None-Match: *` refuses any change of an existing plant (412; 404 when there is none); `If-None-Match: <ETag>, ...` ' +
    'refuses it (412) while the plant is at one of those versions. If-Match is checked first.';

  const answer = async (
    id: bigint,
    outcome: UpdatePlantOutcome,
    expected: ExpectedVersion | undefined,
    reply: { header(name: string, value: string): unknown },
  ): Promise<PlantJson> => {
    if (outcome.kind === 'not-found' || outcome.kind === 'precondition-failed') throw refusal(id, outcome, expected);
    reply.header('etag', etagOf(outcome.plant.version));
    return plantJson(outcome.plant);
  };

  app.patch(
    '/plants/:id',
    {
      schema: {
        operationId: 'updatePlant',
        summary: 'Change a plant',
        description:
          `Changes a plant with a JSON Merge Patch (RFC 7396): the ${CONTENT_FIELDS_OR} sent is set, what is left out is kept, ` +
          `an optional ${OPTIONAL_FIELDS_OR} sent as null is removed. A change that changes nothing answers 200, keeps the version ` +
          'and sends no event. A 200 means the change ' +
          `is durably committed; it answers the plant as it is now, with its new ETag. ${conditionally}`,
        tags: ['plants'],
        security: bearerAuth('plants:write'),
        consumes: [MERGE_PATCH, 'application/json'],
        params: PlantPath,
        headers: ConditionalHeaders.ifMatch,
        body: { $ref: 'PlantPatch', examples: [{ name: 'Monstera deliciosa', tag: null }] },
        response: {
          200: {
            $ref: 'StoredPlant',
            description: 'The plant after the change.',
            headers: ETagHeader,
            examples: [example],
          },
        },
      },
      config: { failures: changeFailures },
      ...oneSmallAnswer,
    },
    async (request, reply) => {
      const { id } = request.params;
      const expected = expectation(request, required);
      sameId(id, request.body.id);
      const change = changeOf(id, request.body);
      const outcome = await conditionalWrite(request, id, expected, read, (pinned) =>
        plants().updatePlant(change, pinned),
      );
      return answer(id, outcome, expected, reply);
    },
  );

  app.put(
    '/plants/:id',
    {
      schema: {
        operationId: 'replacePlant',
        summary: 'Replace a plant',
        description:
          `Replaces the ${CONTENT_FIELDS_AND} of an existing plant (an optional ${OPTIONAL_FIELDS_OR} left out is removed); ` +
          '404 when there is none (creating is ' +
          '`POST /plants`). A replacement that changes nothing answers 200, keeps the version and sends no event. A 200 means the ' +
          `change is durably committed; it answers the plant as it is now, with its ETag. ${conditionally}`,
        tags: ['plants'],
        security: bearerAuth('plants:write'),
        params: PlantPath,
        headers: ConditionalHeaders.ifMatch,
        body: { $ref: 'PlantReplacement', examples: [{ name: 'Monstera deliciosa' }] },
        response: {
          200: {
            $ref: 'StoredPlant',
            description: 'The plant after the change.',
            headers: ETagHeader,
            examples: [example],
          },
        },
      },
      config: { failures: changeFailures },
      ...oneSmallAnswer,
    },
    async (request, reply) => {
      const { id } = request.params;
      const expected = expectation(request, required);
      sameId(id, request.body.id);
      const replacement = replacementOf({ ...request.body, id });
      const outcome = await conditionalWrite(request, id, expected, read, (pinned) =>
        plants().updatePlant(replacement, pinned),
      );
      return answer(id, outcome, expected, reply);
    },
  );

  app.delete(
    '/plants/:id',
    {
      schema: {
        operationId: 'deletePlant',
        summary: 'Delete a plant',
        description: `Deletes a plant. Its id is then free: creating it again is a fresh create. ${conditionally}`,
        tags: ['plants'],
        security: bearerAuth('plants:write'),
        params: PlantPath,
        headers: ConditionalHeaders.ifMatch,
        response: { 204: { type: 'null', description: 'The plant was deleted; the body is empty.' } },
      },
      config: { failures: changeFailures },
      ...oneSmallAnswer,
    },
    async (request, reply) => {
      const { id } = request.params;
      const expected = expectation(request, required);
      const outcome = await conditionalWrite(request, id, expected, read, (pinned) => plants().deletePlant(id, pinned));
      if (outcome.kind !== 'deleted') throw refusal(id, outcome, expected);
      return reply.code(204).send(null);
    },
  );
};
