/**
 * A plant's columns as both stores name them (the fields' own names), for the
 * statements that read, write or compare whole plants. The stores' JSON text is
 * plant-json.ts's.
 */
import {
  OPTIONAL_PLANT_KEYS,
  PLANT_CONTENT_KEYS,
  PLANT_KEYS,
  type PlantContentKey,
  type PlantRecord,
} from './plant.js';
import type { SqlDialect } from './plant-json.js';

/** Every field's column (PLANT_KEYS, in order), each of the row `row` when given. */
export function plantColumnsSql(row?: string): string {
  return PLANT_KEYS.map((key) => (row === undefined ? key : `${row}.${key}`)).join(', ');
}

/** `name, tag`: the content columns (all but the id), each of the row `row` when given. */
export function plantContentColumnsSql(row?: string): string {
  return PLANT_CONTENT_KEYS.map((key) => (row === undefined ? key : `${row}.${key}`)).join(', ');
}

/** The id's type and every content field's (each is text), by field: derived, so a new field has its type. */
function typesOf<Id extends string, Text extends string>(
  id: Id,
  text: Text,
): { readonly id: Id } & { readonly [K in PlantContentKey]: Text } {
  const types = Object.fromEntries(PLANT_CONTENT_KEYS.map((key) => [key, text]));
  // Built key by key from the definition, which TypeScript cannot follow.
  return { id, ...types } as { readonly id: Id } & { readonly [K in PlantContentKey]: Text };
}

/** Each field's PostgreSQL type, for casts of parameters (`$1::int8[]`). */
export const PLANT_POSTGRES_TYPES = typesOf('int8', 'text');

/** Each field's SQLite type. */
export const PLANT_SQLITE_TYPES = typesOf('INTEGER', 'TEXT');

/** The plant's columns as a table defines them: `id INTEGER NOT NULL, name TEXT NOT NULL, ...`. */
export function plantColumnDefinitionsSql(dialect: SqlDialect): string {
  const types = dialect === 'postgres' ? PLANT_POSTGRES_TYPES : PLANT_SQLITE_TYPES;
  const nullable = (key: keyof PlantRecord): boolean => key !== 'id' && OPTIONAL_PLANT_KEYS.has(key);
  return PLANT_KEYS.map((key) => `${key} ${types[key]}${nullable(key) ? '' : ' NOT NULL'}`).join(', ');
}

/**
 * Whether the plants of rows `a` and `b` differ in content (samePlant, negated, in
 * SQL): NULL, an absent tag, counts as a value of its own.
 */
export function plantsDifferSql(dialect: SqlDialect, a: string, b: string): string {
  const columns = (row: string): string => PLANT_CONTENT_KEYS.map((key) => `${row}.${key}`).join(', ');
  if (dialect === 'postgres') return `(${columns(a)}) IS DISTINCT FROM (${columns(b)})`;
  return `(${PLANT_CONTENT_KEYS.map((key) => `${a}.${key} IS NOT ${b}.${key}`).join(' OR ')})`;
}
