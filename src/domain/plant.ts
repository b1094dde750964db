/**
 * What a plant is, defined once: PLANT_FIELDS below, each field with its rules and what the API says of it.
 * Every type, key list and function here is derived from that table, and so is what uses them: the JSON
 * (plant-json.ts), the stores' columns and statements (plant-sql.ts, plant-find-sql.ts), the JSON Schemas and
 * OpenAPI text (plants/schemas.ts), the CSV columns, the CLI's flags and columns, the console's table and editor.
 * A place that must still name every field on its own is typed over PlantContentKey, so leaving a new field out
 * there fails `tsc`; test/store/plant-definition.test.ts checks the stores' schemas and that no text lists
 * the fields by hand. CONTRIBUTING.md has the checklist for adding a field.
 */
import { PRINTABLE_TEXT } from './text-rules.js';

/** A text field's rules, as the JSON Schemas state them (lengths in Unicode code points). */
export interface TextRules {
  readonly minLength: number;
  readonly maxLength: number;
  readonly pattern: string;
}

/** One content field of a plant (every field but the id, which is the int64 the client chooses). */
export interface PlantFieldDefinition {
  /** Whether every plant has it; an optional one is absent from the JSON and the record, NULL in a row. */
  readonly required: boolean;
  /** Whether a search (`q`) matches its words: a searched field has a words column (search-text.ts). */
  readonly searched: boolean;
  readonly rules: TextRules;
  /** The field as a word in a sentence ("the tag"); its key when left out. */
  readonly noun?: string;
  /** What the API documents of it (OpenAPI, CLI help); the rules are stated after it, generated. */
  readonly description: string;
  /** What it says of an optional field left out of a create (generated from the noun when left out). */
  readonly absent?: string;
  readonly example: string;
}

/**
 * The plant's content fields, in the order its JSON, its CSV columns, its rows and its statements give them
 * (after the id). Adding one here, plus a migration per store adding its column, is what a new field takes.
 */
export const PLANT_FIELDS = {
  name: {
    required: true,
    searched: true,
    rules: { minLength: 1, maxLength: 200, pattern: PRINTABLE_TEXT },
    description: 'The name of the plant',
    example: 'Monstera deliciosa',
  },
  tag: {
    required: false,
    searched: true,
    rules: { minLength: 1, maxLength: 100, pattern: PRINTABLE_TEXT },
    description: 'Tag that specifies the type of the plant',
    absent: 'Omit it for a plant without a tag (it is then omitted from responses too, never null).',
    example: 'houseplant',
  },
} as const satisfies { readonly [key: string]: PlantFieldDefinition };

type Fields = typeof PLANT_FIELDS;

/** The fields besides the id: what a plant's content is, and what "same plant?" compares. */
export type PlantContentKey = keyof Fields;

/** The content fields a plant must have: what a create and a replacement require besides the id. */
export type RequiredPlantKey = {
  [K in PlantContentKey]: Fields[K]['required'] extends true ? K : never;
}[PlantContentKey];

/** The content fields a plant may lack. */
export type OptionalPlantKey = Exclude<PlantContentKey, RequiredPlantKey>;

/** The fields whose words a search matches. */
export type SearchedPlantKey = {
  [K in PlantContentKey]: Fields[K]['searched'] extends true ? K : never;
}[PlantContentKey];

type RequiredContent = { readonly [K in RequiredPlantKey]: string };
type OptionalContent = { readonly [K in OptionalPlantKey]?: string };

/** A plant as the service holds it: its int64 id as a bigint, never a JS number; an absent optional field is
 * undefined, never null. */
export interface PlantRecord extends RequiredContent, OptionalContent {
  readonly id: bigint;
}

/** The content fields, in order. The one cast: Object.keys of the definition's literal are its keys. */
export const PLANT_CONTENT_KEYS = Object.keys(PLANT_FIELDS) as readonly PlantContentKey[];

/** Every field, in the order the plant's JSON, its CSV columns and its rows give them. */
export const PLANT_KEYS: readonly (keyof PlantRecord)[] = ['id', ...PLANT_CONTENT_KEYS];

/** The rules of each field other than the id. */
export const PLANT_TEXT_RULES: { readonly [K in PlantContentKey]: Fields[K]['rules'] } = Object.fromEntries(
  PLANT_CONTENT_KEYS.map((key) => [key, PLANT_FIELDS[key].rules]),
) as { readonly [K in PlantContentKey]: Fields[K]['rules'] };

function isRequired(key: PlantContentKey): key is RequiredPlantKey {
  return PLANT_FIELDS[key].required;
}

function isSearched(key: PlantContentKey): key is SearchedPlantKey {
  return PLANT_FIELDS[key].searched;
}

/** The content fields a plant must have, in order. */
export const REQUIRED_CONTENT_KEYS: readonly RequiredPlantKey[] = PLANT_CONTENT_KEYS.filter(isRequired);

/** The content fields a plant may lack (absent from its JSON and its record, NULL in a row), in order. */
export const OPTIONAL_CONTENT_KEYS: readonly OptionalPlantKey[] = PLANT_CONTENT_KEYS.filter(
  (key): key is OptionalPlantKey => !isRequired(key),
);

/** The same, as a set. */
export const OPTIONAL_PLANT_KEYS: ReadonlySet<PlantContentKey> = new Set<PlantContentKey>(OPTIONAL_CONTENT_KEYS);

/** The fields whose words a search matches (search-text.ts), in order. */
export const SEARCHED_PLANT_KEYS: readonly SearchedPlantKey[] = PLANT_CONTENT_KEYS.filter(isSearched);

/** Whether a create of `incoming` is a safe retry of the stored `existing` plant: the same content. */
export function samePlant(existing: PlantRecord, incoming: PlantRecord): boolean {
  return PLANT_CONTENT_KEYS.every((key) => existing[key] === incoming[key]);
}

/** A stored plant with its version: one store-wide counter, never reused, so its ETag tells any two states apart. */
export interface VersionedPlant extends PlantRecord {
  readonly version: bigint;
}

type RequiredChange = { readonly [K in RequiredPlantKey]?: string };
type OptionalChange = { readonly [K in OptionalPlantKey]?: string | null };

/** A change to a plant, read as a JSON Merge Patch (RFC 7396): a field left out is kept; an optional field set
 * to null is removed. */
export interface PlantChange extends RequiredChange, OptionalChange {
  readonly id: bigint;
}

/** A plant's fields with NULL for an absent optional one, as a row or a replacement carries them. */
export type PlantValues = { readonly [K in keyof PlantRecord]-?: Exclude<PlantRecord[K], undefined> | OptionalNull<K> };
type OptionalNull<K extends keyof PlantRecord> = object extends Pick<PlantRecord, K> ? null : never;

/** A plant's content as a row holds it: every field but the id, NULL for an absent optional one. */
export type PlantContent = Omit<PlantValues, 'id'>;

/** A plant's content, being built field by field (the functions below). */
type ContentDraft = { -readonly [K in PlantContentKey]?: string | null };

/** The plant a change makes of `plant`. */
export function changed(plant: PlantRecord, change: PlantChange): PlantRecord {
  const values: ContentDraft = {};
  for (const key of PLANT_CONTENT_KEYS) {
    const value = change[key];
    values[key] = value === undefined ? (plant[key] ?? null) : value;
  }
  return withoutAbsent(filled(plant.id, values));
}

/**
 * A draft with every field set as PlantValues: what the loops above and below build, key by key, which
 * TypeScript cannot follow; PlantValues' required fields are non-null wherever a draft comes from.
 */
function filled(id: bigint, values: ContentDraft): PlantValues {
  return { id, ...values } as PlantValues;
}

/** The record of `values`: an absent (null) optional field left out, as PlantRecord says; the one place that does. */
export function withoutAbsent(values: PlantValues): PlantRecord {
  const record: ContentDraft & { id: bigint } = { id: values.id };
  for (const key of PLANT_CONTENT_KEYS) {
    const value = values[key];
    if (value !== null) record[key] = value;
  }
  return record as PlantRecord;
}

/** `plant`'s values, NULL for an absent optional field. */
export function valuesOf(plant: PlantRecord): PlantValues {
  const values: ContentDraft = {};
  for (const key of PLANT_CONTENT_KEYS) values[key] = plant[key] ?? null;
  return filled(plant.id, values);
}

/** The plant record alone: anything else `plant` carries (a version, a body's unknown properties) left out. */
export function recordOf(plant: PlantRecord): PlantRecord {
  return withoutAbsent(valuesOf(plant));
}

/** The change a merge patch of plant `id` asks for: its known fields only, one left out kept. */
export function changeOf(id: bigint, patch: Omit<PlantChange, 'id'>): PlantChange {
  const change: ContentDraft & { id: bigint } = { id };
  for (const key of PLANT_CONTENT_KEYS) change[key] = patch[key];
  // Each key was copied from a PlantChange's, so the change is one (a required field is never null).
  return change as PlantChange;
}

/** The change a replacement asks for: every field set, an optional one left out removed. */
export function replacementOf(plant: PlantRecord): PlantChange {
  return valuesOf(plant);
}

/** The versions an If-Match accepts: any existing plant, or one of these. */
export type ExpectedVersion = 'any' | readonly bigint[];

export function versionMatches(expected: ExpectedVersion | undefined, version: bigint): boolean {
  return expected === undefined || expected === 'any' || expected.includes(version);
}
