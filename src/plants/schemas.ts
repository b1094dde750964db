/**
 * The plant shapes, as JSON Schema. These objects are the single source of truth:
 * the OpenAPI document shows them, request validation is compiled from them and
 * responses are serialised with them. Each field's schema is built from its rules in
 * the plant's definition (domain/plant.ts) and its documentation below.
 */
import {
  OPTIONAL_CONTENT_KEYS,
  PLANT_CONTENT_KEYS,
  PLANT_FIELDS,
  PLANT_TEXT_RULES,
  REQUIRED_CONTENT_KEYS,
  type OptionalPlantKey,
  type PlantContentKey,
  type PlantFieldDefinition,
} from '../domain/plant.js';
import { CONTENT_FIELDS_AND, listed, nounOf, OPTIONAL_FIELDS_OR, quoted } from '../domain/plant-words.js';

/** Limits the seed leaves open ("not shown"); our decisions (domain/plant.ts), documented via maxLength. */
export const NAME_MAX_LENGTH = PLANT_TEXT_RULES.name.maxLength;

export const Int64Id = {
  type: 'integer',
  format: 'int64',
  description:
    'Identification number of the plant, chosen by the client: any integer from ' +
    '-9223372036854775808 to 9223372036854775807. Sent and returned as a JSON number with every digit exact ' +
    '(parse it with a big-integer-aware JSON reader if your language rounds numbers to doubles).',
  example: 10,
} as const;

/** What the API says of a field; an optional field also says what a patch and a replacement do with it. */
interface FieldDocs {
  readonly description: string;
  readonly example: string;
  readonly patch?: string;
  readonly replacement?: string;
}

/** A field's rules in words: "1 to 100 characters (Unicode code points), no control characters, ...". */
function rulesText(key: PlantContentKey): string {
  const { minLength, maxLength } = PLANT_TEXT_RULES[key];
  return `${minLength} to ${maxLength} characters (Unicode code points), no control characters`;
}

/** A field's documentation, from its definition (domain/plant.ts). */
function docsOf(key: PlantContentKey): FieldDocs {
  const field: PlantFieldDefinition = PLANT_FIELDS[key];
  const noun = nounOf(key);
  const description =
    `${field.description}: ${rulesText(key)}, no unpaired surrogates (a lone JSON escape such as \`\\ud800\`).` +
    (field.required ? '' : ` ${field.absent ?? absentText(noun)}`);
  if (field.required) return { description, example: field.example };
  return {
    description,
    example: field.example,
    patch: `A new ${noun} (${rulesText(key)}), or null to remove it.`,
    replacement: `The new ${noun}; leave it out to remove the ${noun}.`,
  };
}

const absentText = (noun: string): string =>
  `Omit it for a plant without a ${noun} (it is then omitted from responses too, never null).`;

const FIELD_DOCS: { readonly [K in PlantContentKey]: FieldDocs } = Object.fromEntries(
  PLANT_CONTENT_KEYS.map((key) => [key, docsOf(key)]),
) as { readonly [K in PlantContentKey]: FieldDocs };

/** A text field's schema, as json-schema-to-ts reads it (`type` decides the handler's type). */
export interface TextField<Type> {
  readonly type: Type;
  readonly minLength: number;
  readonly maxLength: number;
  readonly pattern: string;
  readonly description: string;
  readonly example: string;
}
type Text = TextField<'string'>;
type NullableText = TextField<readonly ['string', 'null']>;

/** A text field's schema as every plant shape shows it. */
function textField(key: PlantContentKey, description: string = FIELD_DOCS[key].description): Text {
  return { type: 'string', ...PLANT_TEXT_RULES[key], description, example: FIELD_DOCS[key].example };
}

/** The docs of an optional field, or undefined for a required one. */
function optionalDocs(key: PlantContentKey): { readonly patch: string; readonly replacement: string } | undefined {
  const { patch, replacement } = FIELD_DOCS[key];
  return patch === undefined || replacement === undefined ? undefined : { patch, replacement };
}

/**
 * An object of one schema per content field, in PLANT_CONTENT_KEYS order. The one cast: the object is built
 * key by key, which TypeScript cannot follow, and `Properties` names each key's schema type.
 */
function fieldProperties<Properties extends { readonly [K in PlantContentKey]: unknown }>(
  schemaOf: (key: PlantContentKey) => Properties[PlantContentKey],
): Properties {
  return Object.fromEntries(PLANT_CONTENT_KEYS.map((key) => [key, schemaOf(key)])) as Properties;
}

/** Every field as it is stored and served. */
const FIELDS = fieldProperties<{ readonly [K in PlantContentKey]: Text }>((key) => textField(key));

/** A merge patch: an optional field may be null (removed); a required one may not. */
const PATCH_FIELDS = fieldProperties<{
  readonly [K in PlantContentKey]: K extends OptionalPlantKey ? NullableText : Text;
}>((key) => {
  const docs = optionalDocs(key);
  return docs === undefined ? textField(key) : { ...textField(key, docs.patch), type: ['string', 'null'] };
});

/** A replacement: an optional field left out is removed. */
const REPLACEMENT_FIELDS = fieldProperties<{ readonly [K in PlantContentKey]: Text }>((key) =>
  textField(key, optionalDocs(key)?.replacement),
);

export const PlantName = FIELDS.name;
export const PlantTag = FIELDS.tag;

/** The schema of field `key` as a plant shows it. */
export function plantFieldSchema(key: PlantContentKey): Text {
  return FIELDS[key];
}

export const NewPlant = {
  $id: 'NewPlant',
  type: 'object',
  required: ['id', ...REQUIRED_CONTENT_KEYS],
  properties: { id: Int64Id, ...FIELDS },
  description:
    'A plant as sent by the client when creating one. Properties not listed here are allowed by the schema ' +
    'and ignored: they are neither stored nor echoed.',
} as const;

export const Plant = {
  $id: 'Plant',
  type: 'object',
  required: REQUIRED_CONTENT_KEYS,
  properties: FIELDS,
  additionalProperties: false,
  description: 'A plant as returned by the create operation: no id (the client chose it).',
} as const;

export const StoredPlant = {
  $id: 'StoredPlant',
  type: 'object',
  required: ['id', ...REQUIRED_CONTENT_KEYS],
  properties: { id: Int64Id, ...FIELDS },
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
    ...PATCH_FIELDS,
  },
  description:
    'A JSON Merge Patch (RFC 7396) of a plant: the properties sent are changed, the others kept. ' +
    `${listed(quoted(OPTIONAL_CONTENT_KEYS.map((key) => `"${key}": null`)), 'or')} removes that field; ` +
    `${listed(quoted(REQUIRED_CONTENT_KEYS), 'or')} cannot be removed (null is refused). Properties not listed here are ignored.`,
} as const;

export const PlantReplacement = {
  $id: 'PlantReplacement',
  type: 'object',
  required: REQUIRED_CONTENT_KEYS,
  properties: {
    id: {
      ...Int64Id,
      description: 'May be left out; if sent, it must be the id in the path (else 400 INVALID_FIELD).',
    },
    ...REPLACEMENT_FIELDS,
  },
  description:
    `A plant's new ${CONTENT_FIELDS_AND}, replacing all (an optional ${OPTIONAL_FIELDS_OR} left out is removed). ` +
    'Properties not listed here are ignored.',
} as const;
