/**
 * What a plant is, defined once: its fields and their rules, its record and its changes. A field added here
 * is a compile error wherever plant-json.ts, plant-sql.ts or plant-row.ts does not handle it yet.
 */
import { PRINTABLE_TEXT } from './text-rules.js';

/** A plant as the service holds it: its int64 id as a bigint, never a JS number. */
export interface PlantRecord {
  readonly id: bigint;
  readonly name: string;
  /** Absent (undefined) when the plant has no tag; never null. */
  readonly tag?: string;
}

/** A text field's rules, as the JSON Schemas state them (lengths in Unicode code points). */
export interface TextRules {
  readonly minLength: number;
  readonly maxLength: number;
  readonly pattern: string;
}

/** The rules of each field other than the id. */
export const PLANT_TEXT_RULES = {
  name: { minLength: 1, maxLength: 200, pattern: PRINTABLE_TEXT },
  tag: { minLength: 1, maxLength: 100, pattern: PRINTABLE_TEXT },
} as const satisfies { readonly [K in PlantContentKey]-?: TextRules };

/** The fields besides the id: what a plant's content is, and what "same plant?" compares. */
export type PlantContentKey = Exclude<keyof PlantRecord, 'id'>;

/** Every field, in the order the plant's JSON, its CSV columns and its rows give them. */
export const PLANT_KEYS = ['id', 'name', 'tag'] as const satisfies readonly (keyof PlantRecord)[];

/** The content fields, in order. */
export const PLANT_CONTENT_KEYS = ['name', 'tag'] as const satisfies readonly PlantContentKey[];

/** The content fields a plant may lack, as a type: those PlantRecord marks optional. */
export type OptionalPlantKey = {
  [K in PlantContentKey]-?: object extends Pick<PlantRecord, K> ? K : never;
}[PlantContentKey];

/** The content fields a plant must have: what a create and a replacement require besides the id. */
export const REQUIRED_CONTENT_KEYS = ['name'] as const satisfies readonly Exclude<PlantContentKey, OptionalPlantKey>[];

/** The content fields a plant may lack (absent from its JSON and its record, NULL in a row), in order. */
export const OPTIONAL_CONTENT_KEYS = ['tag'] as const satisfies readonly OptionalPlantKey[];

/** The same, as a set. */
export const OPTIONAL_PLANT_KEYS: ReadonlySet<PlantContentKey> = new Set<PlantContentKey>(OPTIONAL_CONTENT_KEYS);

/** The fields whose words a search matches (search-text.ts). */
export const SEARCHED_PLANT_KEYS = ['name', 'tag'] as const satisfies readonly PlantContentKey[];

/** Whether a create of `incoming` is a safe retry of the stored `existing` plant: the same content. */
export function samePlant(existing: PlantRecord, incoming: PlantRecord): boolean {
  return PLANT_CONTENT_KEYS.every((key) => existing[key] === incoming[key]);
}

/** A stored plant with its version: one store-wide counter, never reused, so its ETag tells any two states apart. */
export interface VersionedPlant extends PlantRecord {
  readonly version: bigint;
}

/** A change to a plant, read as a JSON Merge Patch (RFC 7396): a field left out is kept; a tag of null removes it. */
export interface PlantChange {
  readonly id: bigint;
  readonly name?: string;
  readonly tag?: string | null;
}

/** The plant a change makes of `plant`. */
export function changed(plant: PlantRecord, change: PlantChange): PlantRecord {
  return withoutAbsent({
    id: plant.id,
    name: change.name ?? plant.name,
    tag: change.tag === undefined ? (plant.tag ?? null) : change.tag,
  });
}

/** A plant's fields with NULL for an absent optional one, as a row or a replacement carries them. */
export type PlantValues = { readonly [K in keyof PlantRecord]-?: Exclude<PlantRecord[K], undefined> | OptionalNull<K> };
type OptionalNull<K extends keyof PlantRecord> = object extends Pick<PlantRecord, K> ? null : never;

/** The record of `values`: an absent (null) optional field left out, as PlantRecord says; the one place that does. */
export function withoutAbsent({ id, name, tag }: PlantValues): PlantRecord {
  return tag === null ? { id, name } : { id, name, tag };
}

/** `plant`'s values, NULL for an absent optional field. */
export function valuesOf(plant: PlantRecord): PlantValues {
  return { id: plant.id, name: plant.name, tag: plant.tag ?? null };
}

/** A plant's content as a row holds it: every field but the id, NULL for an absent optional one. */
export type PlantContent = Omit<PlantValues, 'id'>;

/** The plant record alone: anything else `plant` carries (a version, a body's unknown properties) left out. */
export function recordOf(plant: PlantRecord): PlantRecord {
  return withoutAbsent(valuesOf(plant));
}

/** The change a merge patch of plant `id` asks for: its known fields only, one left out kept. */
export function changeOf(id: bigint, patch: Omit<PlantChange, 'id'>): PlantChange {
  return { id, name: patch.name, tag: patch.tag };
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
