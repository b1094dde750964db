/**
 * The plant shapes, as JSON Schema. These objects are the single source of truth:
 * the OpenAPI document shows them, request validation is compiled from them and
 * responses are serialised with them.
 */
import { PLANT_TEXT_RULES } from '../domain/plant.js';

/** Limits the seed leaves open ("not shown"); our decisions (domain/plant.ts), documented via maxLength. */
export const NAME_MAX_LENGTH = PLANT_TEXT_RULES.name.maxLength;
export const TAG_MAX_LENGTH = PLANT_TEXT_RULES.tag.maxLength;

export const Int64Id = {
  type: 'integer',
  format: 'int64',
  description:
    'Identification number of the plant, chosen by the client: any integer from ' +
    '-9223372036854775808 to 9223372036854775807. Sent and returned as a JSON number with every digit exact ' +
    '(parse it with a big-integer-aware JSON reader if your language rounds numbers to doubles).',
  example: 10,
} as const;

export const PlantName = {
  type: 'string',
  ...PLANT_TEXT_RULES.name,
  description:
    `The name of the plant: 1 to ${NAME_MAX_LENGTH} characters (Unicode code points), no control characters, no unpaired ` +
    'surrogates (a lone JSON escape such as `\\ud800`).',
  example: 'Monstera deliciosa',
} as const;

export const PlantTag = {
  type: 'string',
  ...PLANT_TEXT_RULES.tag,
  description:
    `Tag that specifies the type of the plant: 1 to ${TAG_MAX_LENGTH} characters, no control characters, no unpaired surrogates. ` +
    'Omit it for a plant without a tag (it is then omitted from responses too, never null).',
  example: 'houseplant',
} as const;

export const NewPlant = {
  $id: 'NewPlant',
  type: 'object',
  required: ['id', 'name'],
  properties: { id: Int64Id, name: PlantName, tag: PlantTag },
  description:
    'A plant as sent by the client when creating one. Properties not listed here are allowed by the schema ' +
    'and ignored: they are neither stored nor echoed.',
} as const;

export const Plant = {
  $id: 'Plant',
  type: 'object',
  required: ['name'],
  properties: { name: PlantName, tag: PlantTag },
  additionalProperties: false,
  description: 'A plant as returned by the create operation: no id (the client chose it).',
} as const;

export const StoredPlant = {
  $id: 'StoredPlant',
  type: 'object',
  required: ['id', 'name'],
  properties: { id: Int64Id, name: PlantName, tag: PlantTag },
  additionalProperties: false,
  description: 'A plant as read back from the store, with its id.',
} as const;

export const PlantPatch = {
  $id: 'PlantPatch',
  type: 'object',
  properties: {
    id: {
      ...Int64Id,
      description: 'May be left out; if sent, it must be the id in the path (else 400 INVALID_FIELD).',
    },
    name: PlantName,
    tag: {
      ...PlantTag,
      type: ['string', 'null'],
      description: `A new tag (1 to ${TAG_MAX_LENGTH} characters, no control characters), or null to remove it.`,
    },
  },
  description:
    'A JSON Merge Patch (RFC 7396) of a plant: the properties sent are changed, the others kept. `"tag": null` removes the tag; ' +
    'a name cannot be removed (null is refused). Properties not listed here are ignored.',
} as const;

export const PlantReplacement = {
  $id: 'PlantReplacement',
  type: 'object',
  required: ['name'],
  properties: {
    id: {
      ...Int64Id,
      description: 'May be left out; if sent, it must be the id in the path (else 400 INVALID_FIELD).',
    },
    name: PlantName,
    tag: { ...PlantTag, description: 'The new tag; leave it out to remove the tag.' },
  },
  description:
    "A plant's new name and tag, replacing both (a tag left out is removed). Properties not listed here are ignored.",
} as const;
