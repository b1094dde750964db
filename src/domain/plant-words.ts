/**
 * The plant's fields in sentences, from its definition (plant.ts): whatever text names the fields (OpenAPI
 * descriptions, error messages, CSV notes, CLI help) says them through these, so a new field is named there
 * too. test/store/plant-definition.test.ts fails on a list of fields written by hand anywhere else in src/.
 */
import { OPTIONAL_CONTENT_KEYS, PLANT_CONTENT_KEYS, PLANT_FIELDS, PLANT_KEYS, REQUIRED_CONTENT_KEYS } from './plant.js';
import { SEARCHED_PLANT_KEYS, type PlantContentKey, type PlantFieldDefinition } from './plant.js';

/** `a`, `a or b`, `a, b or c` (with `and` when asked). */
export function listed(words: readonly string[], conjunction: 'or' | 'and'): string {
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} ${conjunction} ${words.at(-1) ?? ''}`;
}

/** Each word in backticks, for Markdown (OpenAPI descriptions). */
export const quoted = (words: readonly string[]): string[] => words.map((word) => `\`${word}\``);

/** The field as a word in a sentence: "name", "tag". */
export function nounOf(key: PlantContentKey): string {
  const field: PlantFieldDefinition = PLANT_FIELDS[key];
  return field.noun ?? key;
}

const nouns = (keys: readonly PlantContentKey[]): string[] => keys.map(nounOf);

/** "name or tag": what a conflict differs in, what a change may set. */
export const CONTENT_FIELDS_OR = listed(nouns(PLANT_CONTENT_KEYS), 'or');

/** "name and tag": what a safe retry repeats, what a replacement replaces. */
export const CONTENT_FIELDS_AND = listed(nouns(PLANT_CONTENT_KEYS), 'and');

/** "name or tag": the fields whose words a search matches. */
export const SEARCHED_FIELDS_OR = listed(nouns(SEARCHED_PLANT_KEYS), 'or');

/** "tag": the fields a plant may lack. */
export const OPTIONAL_FIELDS_AND = listed(nouns(OPTIONAL_CONTENT_KEYS), 'and');

/** "tag": the same, with `or`. */
export const OPTIONAL_FIELDS_OR = listed(nouns(OPTIONAL_CONTENT_KEYS), 'or');

/** `id,name,tag`: the CSV header an export writes. */
export const CSV_COLUMNS_TEXT = PLANT_KEYS.join(',');

/** `{"id","name","tag"}`: the members of a plant's JSON, for a sentence. */
export const JSON_MEMBERS = `{${PLANT_KEYS.map((key) => JSON.stringify(key)).join(',')}}`;

/** The required columns of a CSV import, in backticks: `` `id` and `name` ``. */
export const REQUIRED_COLUMNS_TEXT = listed(quoted(['id', ...REQUIRED_CONTENT_KEYS]), 'and');

/** The same, with `or`. */
export const REQUIRED_COLUMNS_OR = listed(quoted(['id', ...REQUIRED_CONTENT_KEYS]), 'or');

/** The optional columns, in backticks: `` `tag` ``. */
export const OPTIONAL_COLUMNS_TEXT = listed(quoted(OPTIONAL_CONTENT_KEYS), 'and');

/** A plant's content with every field, from the definition's examples: `{ name: 'Monstera deliciosa', ... }`. */
export const EXAMPLE_CONTENT = Object.fromEntries(
  PLANT_CONTENT_KEYS.map((key) => [key, PLANT_FIELDS[key].example]),
) as { readonly [K in PlantContentKey]: string };

/** The same with an id: `{ id: 10, name: 'Monstera deliciosa', ... }`. */
export function examplePlant(id: number): { readonly id: number } & typeof EXAMPLE_CONTENT {
  return { id, ...EXAMPLE_CONTENT };
}
