/**
 * The plant shapes, as JSON Schema. These objects are the single source of truth:
 * the OpenAPI document shows them, request validation is compiled from them and
 * responses are serialised with them. Each field's schema is built from its rules in
 * the plant's definition (domain/plant.ts) and its documentation below.
 */
import {
  PLANT_CONTENT_KEYS,
  PLANT_TEXT_RULES,
  REQUIRED_CONTENT_KEYS,
  type OptionalPlantKey,
  type PlantContentKey,
} from '../domain/plant.js';

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

/** What the API says of a field; an optional field also says what a patch and a replacement do with it. */
type FieldDocs<K extends PlantContentKey> = {
  readonly description: string;
  readonly example: string;
} & (K extends OptionalPlantKey ? { readonly patch: string; readonly replacement: string } : object);

const FIELD_DOCS: { readonly [K in PlantContentKey]: FieldDocs<K> } = {
  name: {
    description:
      `The name of the plant: 1 to ${NAME_MAX_LENGTH} characters (Unicode code points), no control characters, ` +
      'no unpaired surrogates (a lone JSON escape such as `\\ud800`).',
    example: 'Monstera deliciosa',
  },
  tag: {
    description:
      `Tag that specifies the type of the plant: 1 to ${TAG_MAX_LENGTH} characters, no control characters, ` +
      'no unpaired surrogates. ' +
      'Omit it for a plant without a tag (it is then omitted from responses too, never null).',
    example: 'houseplant',
    patch: `A new tag (1 to ${TAG_MAX_LENGTH} characters, no control characters), or null to remove it.`,
    replacement: 'The new tag; leave it out to remove the tag.',
  },
};

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
function optionalDocs(key: PlantContentKey): FieldDocs<OptionalPlantKey> | undefined {
  const docs = FIELD_DOCS[key];
  return 'patch' in docs ? docs : undefined;
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
    'A JSON Merge Patch (RFC 7396) of a plant: the properties sent are changed, the others kept. `"tag": null` removes the tag; ' +
    'a name cannot be removed (null is refused). Properties not listed here are ignored.',
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
    "A plant's new name and tag, replacing both (a tag left out is removed). Properties not listed here are ignored.",
} as const;
