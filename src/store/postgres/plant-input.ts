/**
 * A plant as the PostgreSQL store's batched writes send it (array-input.ts): its
 * fields, the id as decimal text (exact), and the find columns computed by the
 * service (search-text.ts).
 */
import { OPTIONAL_PLANT_KEYS, valuesOf, type PlantRecord, type PlantValues } from '../../domain/plant.js';
import { PLANT_POSTGRES_TYPES } from '../../domain/plant-sql.js';
import { findRow, type FindRow } from '../../domain/search-text.js';
import { FIND_ROW_POSTGRES_TYPES } from '../../domain/plant-find-sql.js';
import type { ColumnTypes } from './array-input.js';

export type PlantInput = Omit<PlantValues, 'id'> & { readonly id: string } & FindRow;

/** The columns of a plant's row, as `plants` stores them. */
export const PLANT_INPUT_TYPES: ColumnTypes<PlantInput> = {
  ...PLANT_POSTGRES_TYPES,
  ...FIND_ROW_POSTGRES_TYPES,
};

/** The columns that may be NULL. */
export const NULLABLE_PLANT_INPUTS: ReadonlySet<string> = OPTIONAL_PLANT_KEYS;

/** The input row of a plant's values (an absent field NULL). */
export function plantInput(values: PlantValues): PlantInput {
  return { ...values, id: values.id.toString(), ...findRow(values) };
}

/** The input row of a plant. */
export function recordInput(plant: PlantRecord): PlantInput {
  return plantInput(valuesOf(plant));
}
