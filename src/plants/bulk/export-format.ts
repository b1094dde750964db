/**
 * How an export writes plants: NDJSON lines of the plant's JSON (as GET /plants/{id}
 * answers it, int64 ids exact) or CSV records under a header of its fields (csv.ts).
 * Each is exactly what the import reads back.
 */
import { plantJson } from '../../domain/plant-json.js';
import type { ExportChunk } from '../../store/types.js';
import { CSV_HEADER, plantCsvRecord } from './csv.js';

export type ExportFormat = 'ndjson' | 'csv';

export const EXPORT_MEDIA_TYPES: Readonly<Record<ExportFormat, string>> = {
  ndjson: 'application/x-ndjson',
  csv: 'text/csv; charset=utf-8; header=present',
};

export function exportHeader(format: ExportFormat): string {
  return format === 'csv' ? CSV_HEADER : '';
}

export function formatChunk(format: ExportFormat, plants: ExportChunk): string {
  let text = '';
  // An id is a number, written as it is; a text field is text that no spreadsheet may run as a formula (csv.ts).
  if (format === 'csv') for (const plant of plants) text += plantCsvRecord(plant);
  else for (const plant of plants) text += `${plantJson(plant)}\n`;
  return text;
}
