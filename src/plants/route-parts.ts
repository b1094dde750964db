/** Schema parts and shapes the plant routes share. */
import { recordOf, type PlantRecord } from '../domain/plant.js';
import { entityTagListHeader } from '../http/conditional-headers.js';
import { Int64Id } from './schemas.js';

/**
 * Route options for the routes that answer one plant (or an Error record): their bodies are always far below the
 * compression threshold, so the compression hooks are left off them rather than run on every request to decide so.
 */
export const oneSmallAnswer = { compress: false } as const;

export const PlantPath = {
  type: 'object',
  required: ['id'],
  properties: { id: { ...Int64Id, description: 'The plant id (an int64, in decimal).' } },
} as const;

/** The response header naming the version of the plant the response carries. */
export const ETagHeader = {
  ETag: {
    type: 'string',
    description:
      'The plant\'s current version, a strong entity-tag (`"42"`): send it in If-Match to change the plant only if it is still so.',
  },
} as const;

export const ConditionalHeaders = {
  ifMatch: {
    type: 'object',
    properties: {
      'if-match': entityTagListHeader(
        'An ETag of the plant (or `*`, any existing plant), or a comma-separated list of them: the write happens only if the ' +
          'plant is at one of those versions, else 412. Weak tags (`W/"42"`) never match.',
      ),
      'if-none-match': entityTagListHeader(
        '`*`: 412 if the plant exists (so the answer is 412 or 404, and nothing changes). A comma-separated list of ETags: 412 ' +
          'if the plant is at one of those versions (weak comparison), else the write goes on. Checked after If-Match.',
      ),
    },
  },
  ifNoneMatch: {
    type: 'object',
    properties: {
      'if-none-match': entityTagListHeader(
        'An ETag the client holds, or a comma-separated list of them (weak comparison), or `*`: if the plant is at one of ' +
          'those versions (for `*`: exists), 304 and no body.',
      ),
    },
  },
  createOnly: {
    type: 'object',
    properties: {
      'if-none-match': entityTagListHeader(
        '`*`: create only; if a plant has this id at all (even identical), 412 and nothing changes. A list of ETags is ' +
          'ignored: the collection it would be compared with has none.',
      ),
    },
  },
} as const;

/** A plant as the API shows it: its record, so no version (that is the ETag) and no key for an absent field. */
export type PlantJson = PlantRecord;

export function plantJson(plant: PlantRecord): PlantJson {
  return recordOf(plant);
}

/** The create response: a `Plant`, the record without its id (the client chose it). */
export function createdPlantJson(plant: PlantRecord): Omit<PlantRecord, 'id'> {
  const { id, ...content } = recordOf(plant);
  return content;
}
