/**
 * The lines of an import turned into plants, each by create's own rules: the
 * NewPlant schema (the same one POST /plants validates with, so the same messages)
 * and the lossless JSON reader (every digit of an int64 id kept).
 */
import { ApiError, failure } from '../../http/errors.js';
import { parseInt64Text } from '../../http/int64.js';
import { parseJsonOrFail } from '../../http/json-body.js';
import { createAjv, toRuntimeSchema, validationFailure } from '../../http/validation.js';
import { OPTIONAL_PLANT_KEYS, PLANT_CONTENT_KEYS, PLANT_KEYS, valuesOf, type PlantRecord } from '../../domain/plant.js';
import type { ImportRow } from '../../store/types.js';
import { NewPlant } from '../schemas.js';
import { CSV_COLUMNS, cellText, parseCsvRecord } from './csv.js';
import type { Line } from './lines.js';

/** What a line gave: a plant, a problem with it (its catalogue code and message), or nothing (blank). */
export type LineResult = { readonly row: ImportRow } | { readonly problem: ImportProblem } | undefined;

export interface ImportProblem {
  readonly line: number;
  readonly error: number;
  readonly message: string;
}

const validateNewPlant = createAjv(false).compile(toRuntimeSchema(NewPlant));

function problemOf(line: number, error: ApiError): { problem: ImportProblem } {
  return { problem: { line, error: error.entry.code, message: error.message } };
}

/** A parsed object as a plant, or the message create would answer it with. */
function plantOf(line: number, value: unknown): LineResult {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return problemOf(line, failure('BODY_NOT_OBJECT'));
  if (!validateNewPlant(value)) return problemOf(line, validationFailure(validateNewPlant.errors ?? [], 'body'));
  // Valid: the schema's int64 keyword has made the id a bigint.
  return { row: { line, ...valuesOf(value as PlantRecord) } };
}

function isBlank(text: string): boolean {
  return text.trim() === '';
}

/** Reads NDJSON: one NewPlant per line. */
export function ndjsonRows(): (line: Line) => LineResult {
  return (line) => {
    if ('problem' in line) return problemOf(line.number, failure('INVALID_FIELD', [`the line ${line.problem}`]));
    if (isBlank(line.text)) return undefined;
    let value: unknown;
    try {
      value = parseJsonOrFail(line.text);
    } catch (error) {
      if (error instanceof ApiError) return problemOf(line.number, error);
      throw error;
    }
    return plantOf(line.number, value);
  };
}

function isPlantColumn(name: string): boolean {
  return (CSV_COLUMNS as readonly string[]).includes(name);
}

const REQUIRED_COLUMNS = PLANT_KEYS.filter((key) => key === 'id' || !OPTIONAL_PLANT_KEYS.has(key));

/** The header's column positions, or why it is not a usable header. */
function headerOf(text: string): Map<string, number> | string {
  const parsed = parseCsvRecord(text);
  if ('problem' in parsed) return parsed.problem;
  const columns = new Map<string, number>();
  for (const [i, field] of parsed.fields.entries()) {
    const name = field.trim().toLowerCase();
    // Two cells for one of the plant's fields: which one is meant cannot be told, so neither is guessed.
    if (columns.has(name) && isPlantColumn(name)) return `names the column ${name} twice`;
    if (!columns.has(name)) columns.set(name, i);
  }
  if (REQUIRED_COLUMNS.some((column) => !columns.has(column))) {
    const optional = [...OPTIONAL_PLANT_KEYS].join(', ');
    return `must name the columns ${CSV_COLUMNS.join(',')} (${optional} optional, in any order); got '${text.slice(0, 100)}'`;
  }
  return columns;
}

function shortRecord(line: number, fields: number): LineResult {
  return problemOf(line, failure('INVALID_FIELD', [`the record has ${fields} fields, fewer than its header names`]));
}

/**
 * Reads CSV with a header row. The header's first line decides the columns: the id
 * and the required fields must be there, the optional ones may, each at most once; others
 * are ignored (as unknown properties are on create). An empty cell of an optional field means none.
 */
export function csvRows(): (line: Line) => LineResult {
  let columns: Map<string, number> | undefined;
  return (line) => {
    if ('problem' in line) return problemOf(line.number, failure('INVALID_FIELD', [`the line ${line.problem}`]));
    if (isBlank(line.text)) return undefined;
    if (columns === undefined) {
      const header = headerOf(line.text);
      // Without its columns no line can be read: the whole import is refused, in either mode.
      if (typeof header === 'string')
        throw failure('IMPORT_INVALID', [`line ${line.number}: the CSV header ${header}`]);
      columns = header;
      return undefined;
    }
    const parsed = parseCsvRecord(line.text);
    if ('problem' in parsed) return problemOf(line.number, failure('INVALID_FIELD', [`the record ${parsed.problem}`]));
    const cell = (column: string) => {
      const index = columns?.get(column);
      return index === undefined ? undefined : parsed.fields[index];
    };
    const idText = cell('id');
    if (idText === undefined) return shortRecord(line.number, parsed.fields.length);
    // A cell is text: an id that is not plain decimal digits stays text, and the schema says why it is refused.
    const plant: Record<string, unknown> = { id: parseInt64Text(idText) ?? idText };
    for (const key of PLANT_CONTENT_KEYS) {
      const text = cell(key);
      if (text === undefined && !OPTIONAL_PLANT_KEYS.has(key)) return shortRecord(line.number, parsed.fields.length);
      // A cell as the export wrote it behind a single quote (no formula for spreadsheets) is read back exactly;
      // an empty cell of an optional field means that the plant has none.
      if (text !== undefined && !(text === '' && OPTIONAL_PLANT_KEYS.has(key))) plant[key] = cellText(text);
    }
    return plantOf(line.number, plant);
  };
}
