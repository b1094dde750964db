/**
 * Test rows from plants: a row, an import line or a writer's create carries every field of the definition
 * (NULL for an absent optional one), so tests build them here from plant records and a new optional field
 * changes no test that does not use it.
 */
import { valuesOf, type PlantRecord, type PlantValues } from '../../src/domain/plant.js';
import type { PlantWrite } from '../../src/store/sqlite/writer-protocol.js';
import type { ImportRow } from '../../src/store/types.js';

/** A plant as a row carries it: every field, NULL for an absent optional one. */
export function plantValues(plant: PlantRecord): PlantValues {
  return valuesOf(plant);
}

/** Import line `line` of `plant`. */
export function importRow(line: number, plant: PlantRecord): ImportRow {
  return { line, ...valuesOf(plant) };
}

/** `plants` as import lines, numbered from `firstLine`. */
export function importRows(plants: readonly PlantRecord[], firstLine = 1): ImportRow[] {
  return plants.map((plant, i) => importRow(firstLine + i, plant));
}

/** `count` import lines of plants `from`, `from + 1`, ..., named by `nameOf` (lines numbered from `firstLine`). */
export function numberedImportRows(
  from: number,
  count: number,
  nameOf: (id: number) => string = (id) => `plant ${id}`,
  firstLine = 1,
): ImportRow[] {
  return Array.from({ length: count }, (_, i) =>
    importRow(firstLine + i, { id: BigInt(from + i), name: nameOf(from + i) }),
  );
}

/** The SQLite writer's create of `plant`. */
export function createWrite(plant: PlantRecord): PlantWrite {
  return { op: 'create', ...valuesOf(plant) };
}
