/**
 * The plant's fields as the console shows and edits them, from the plant's definition (src/domain/plant.ts):
 * the table's columns, the create form and the editor are made from this list, so a new field shows and can be
 * edited with no change here. A field's label is its noun, capitalised; an optional one left empty is none.
 */
import { OPTIONAL_PLANT_KEYS, PLANT_CONTENT_KEYS } from '../../domain/plant.js';
import { nounOf } from '../../domain/plant-words.js';
import type { PlantChange, PlantContentKey, PlantRecord } from '../../domain/plant.js';
import type { Plant } from './api.js';

export interface FieldView {
  readonly key: PlantContentKey;
  /** "Name", "Tag". */
  readonly label: string;
  readonly optional: boolean;
}

const capitalised = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

export const PLANT_FIELD_VIEWS: readonly FieldView[] = PLANT_CONTENT_KEYS.map((key) => {
  return {
    key,
    label: capitalised(nounOf(key)),
    optional: OPTIONAL_PLANT_KEYS.has(key),
  };
});

/** A form's text for each field ('' for an absent optional one). */
export type Draft = { readonly [K in PlantContentKey]: string };

export const EMPTY_DRAFT: Draft = Object.fromEntries(PLANT_CONTENT_KEYS.map((key) => [key, ''])) as Draft;

export function draftOf(plant: Plant): Draft {
  return Object.fromEntries(PLANT_CONTENT_KEYS.map((key) => [key, plant[key] ?? ''])) as Draft;
}

/** The fields a create sends: an empty optional one left out. Built key by key, which TypeScript cannot follow. */
export function createdOf(draft: Draft): Omit<PlantRecord, 'id'> {
  const sent = PLANT_FIELD_VIEWS.filter(({ key, optional }) => !optional || draft[key] !== '');
  return Object.fromEntries(sent.map(({ key }) => [key, draft[key]])) as Omit<PlantRecord, 'id'>;
}

/** The merge patch an edit sends: every field, an empty optional one as null (removed). */
export function patchOf(draft: Draft): Omit<PlantChange, 'id'> {
  return Object.fromEntries(
    PLANT_FIELD_VIEWS.map(({ key, optional }) => [key, optional && draft[key] === '' ? null : draft[key]]),
  ) as Omit<PlantChange, 'id'>;
}
