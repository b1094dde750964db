/**
 * The plant shapes, as JSON Schema. These objects are the single source of truth:
 * the OpenAPI document shows them, request validation is compiled from them and
 * responses are serialised with them.
 */
import { PRINTABLE_TEXT } from '../http/text-rules.js';

/** Limits the seed leaves open ("not shown"); our decisions, documented via maxLength. */
export const NAME_MAX_LENGTH = 200;
export const TAG_MAX_LENGTH = 100;


export const Int64Id = {
  type: 'integer',
  format: 'int64',
  description:
    'Identification number of the plant, chosen by the client: any integer from ' +
    '-9223372036854775808 to 9223372036854775807. Sent and returned as a JSON number with every digit exact ' +
    '(parse it with a big-integer-aware JSON reader if your language rounds numbers to doubles).',
  example: 10,
} as const;

const PlantName = {
  type: 'string',
  minLength: 1,
  maxLength: NAME_MAX_LENGTH,
  pattern: PRINTABLE_TEXT,
  description: `The name of the plant: 1 to ${NAME_MAX_LENGTH} characters (Unicode code points), no control characters.`,
  example: 'Monstera deliciosa',
} as const;

const PlantTag = {
  type: 'string',
  minLength: 1,
  maxLength: TAG_MAX_LENGTH,
  pattern: PRINTABLE_TEXT,
  description:
    `Tag that specifies the type of the plant: 1 to ${TAG_MAX_LENGTH} characters, no control characters. ` +
    'Omit it for a plant without a tag (it is then omitted from responses too, never null).',
  example: 'houseplant',
} as const;

export const NewPlant = {
  type: 'object',
  required: ['id', 'name'],
  properties: { id: Int64Id, name: PlantName, tag: PlantTag },
  description:
    'A plant as sent by the client when creating one. Properties not listed here are allowed by the schema ' +
    'and ignored: they are neither stored nor echoed.',
} as const;

export const Plant = {
  type: 'object',
  required: ['name'],
  properties: { name: PlantName, tag: PlantTag },
  additionalProperties: false,
  description: 'A plant as returned by the create operation: no id (the client chose it).',
} as const;

export const StoredPlant = {
  type: 'object',
  required: ['id', 'name'],
  properties: { id: Int64Id, name: PlantName, tag: PlantTag },
  additionalProperties: false,
  description: 'A plant as read back from the store, with its id.',
} as const;
