/**
 * The JSON a plant is served as everywhere (bodies, event payloads, stored JSON text): compact, fields in
 * PLANT_KEYS order, the int64 id as exact digits, an absent optional field left out.
 * The SQL expressions come from the same field list, so a store's text is byte for byte plantJson's:
 * to_json(text) and json_quote escape as JSON.stringify does for the text the rules allow.
 */
import { OPTIONAL_PLANT_KEYS, PLANT_CONTENT_KEYS, type PlantRecord } from './plant.js';

export type SqlDialect = 'sqlite' | 'postgres';

/** A plant's JSON text; written by hand so that the int64 id keeps every digit. */
export function plantJson(plant: PlantRecord): string {
  let json = `{"id":${plant.id.toString()}`;
  for (const key of PLANT_CONTENT_KEYS) {
    const value = plant[key];
    if (value !== undefined) json += `,"${key}":${JSON.stringify(value)}`;
  }
  return `${json}}`;
}

/** The JSON of a deleted plant: its id alone. */
export function deletedPlantJson(id: bigint): string {
  return `{"id":${id.toString()}}`;
}

/** `column` of the row named `row` (or unqualified). */
function columnOf(row: string | undefined, column: string): string {
  return row === undefined ? column : `${row}.${column}`;
}

/** A text column as a JSON string. */
function quoted(dialect: SqlDialect, column: string): string {
  return dialect === 'postgres' ? `to_json(${column})::text` : `json_quote(${column})`;
}

/**
 * The SQL expression of the plant JSON of the row `row` (a table or alias; the
 * statement's only row source when left out), in `dialect`: what plantJson writes.
 */
export function plantJsonSql(dialect: SqlDialect, row?: string): string {
  const parts = [`'{"id":' || ${columnOf(row, 'id')}`];
  for (const key of PLANT_CONTENT_KEYS) {
    const column = columnOf(row, key);
    const member = `',"${key}":' || ${quoted(dialect, column)}`;
    if (!OPTIONAL_PLANT_KEYS.has(key)) parts.push(member);
    else parts.push(dialect === 'postgres' ? `coalesce(${member}, '')` : `iif(${column} IS NULL, '', ${member})`);
  }
  return `${parts.join(' || ')} || '}'`;
}

/** The SQL expression of deletedPlantJson for the row `row`. */
export function deletedPlantJsonSql(row?: string): string {
  return `'{"id":' || ${columnOf(row, 'id')} || '}'`;
}
