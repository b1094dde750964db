/**
 * The find columns (search-text.ts: name_key and a words column per searched field) as both stores' statements
 * name them, so a field added to SEARCHED_PLANT_KEYS reaches every write, import, copy and search by itself.
 */
import { FIND_ROW_COLUMNS, SEARCHED_FIELDS, WORDS_COLUMNS, type FindRow } from './search-text.js';
import type { PlantContentKey } from './plant.js';
import type { SqlDialect } from './plant-json.js';

const qualified = (columns: readonly string[], row: string | undefined): string =>
  columns.map((column) => (row === undefined ? column : `${row}.${column}`)).join(', ');

/** `name_words, tag_words`, each of the row `row` when given. */
export function wordsColumnsSql(row?: string): string {
  return qualified(WORDS_COLUMNS, row);
}

/** `name_key, name_words, tag_words`, each of the row `row` when given. */
export function findColumnsSql(row?: string): string {
  return qualified(FIND_ROW_COLUMNS, row);
}

/** The find columns made from the field `key`: `name` gives name_key and name_words, `tag` gives tag_words. */
export function findColumnsOf(key: PlantContentKey): (keyof FindRow)[] {
  const columns: (keyof FindRow)[] = key === 'name' ? ['name_key'] : [];
  for (const field of SEARCHED_FIELDS) if (field.key === key) columns.push(field.column);
  return columns;
}

/** The find columns as a table defines them: `name_key TEXT NOT NULL, name_words TEXT NOT NULL, ...`. */
export function findColumnDefinitionsSql(dialect: SqlDialect): string {
  const type = dialect === 'postgres' ? 'text' : 'TEXT';
  return FIND_ROW_COLUMNS.map((column) => `${column} ${type} NOT NULL`).join(', ');
}

/** Each find column's PostgreSQL type, for casts of parameters. */
export const FIND_ROW_POSTGRES_TYPES = Object.fromEntries(FIND_ROW_COLUMNS.map((column) => [column, 'text'])) as {
  readonly [C in keyof FindRow]: 'text';
};

/** Every searched word of the row `row`, space-separated: `row.name_words || ' ' || row.tag_words`. */
export function allWordsSql(row?: string): string {
  return WORDS_COLUMNS.map((column) => (row === undefined ? column : `${row}.${column}`)).join(` || ' ' || `);
}
