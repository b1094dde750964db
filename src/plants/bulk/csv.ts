/**
 * CSV as RFC 4180 writes it, one record per line: fields separated by commas, a
 * field with a comma or a double quote quoted, quotes inside doubled. A plant's text
 * fields never hold a line break (no control characters), so a record never spans
 * lines, and a quoted field left open at the end of its line is an error.
 */
import { PLANT_CONTENT_KEYS, PLANT_KEYS, type PlantRecord } from '../../domain/plant.js';

/** A plant's columns: its fields, in order. */
export const CSV_COLUMNS = PLANT_KEYS;

/** The fields of one record, or why it is not one. */
export function parseCsvRecord(line: string): { fields: string[] } | { problem: string } {
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    if (line[i] === '"') {
      let value = '';
      i += 1;
      for (;;) {
        const close = line.indexOf('"', i);
        if (close === -1)
          return {
            problem:
              "has a quoted field that is not closed on its line (a plant's text fields cannot contain line breaks)",
          };
        value += line.slice(i, close);
        if (line[close + 1] !== '"') {
          i = close + 1;
          break;
        }
        value += '"';
        i = close + 2;
      }
      fields.push(value);
      if (i < line.length && line[i] !== ',')
        return { problem: `has text after a closing quote, at character ${i + 1}` };
    } else {
      const comma = line.indexOf(',', i);
      const end = comma === -1 ? line.length : comma;
      const value = line.slice(i, end);
      if (value.includes('"'))
        return { problem: 'has a double quote inside an unquoted field (quote the field and double the quote)' };
      fields.push(value);
      i = end;
    }
    if (i >= line.length) return { fields };
    i += 1; // the comma
  }
}

/** A cell as RFC 4180 writes it: quoted when it holds a comma or a double quote. */
export function csvField(value: string): string {
  return /[",]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/**
 * Spreadsheets run a cell that starts with =, +, -, @, a tab or a CR as a formula
 * (CSV injection). A text cell starting with one of them is written behind a single
 * quote, which they read as "this is text", and quoted, as OWASP's guidance says.
 * A cell starting with a single quote gets one more, so that the import can undo
 * the escape exactly: it drops the first quote only before one of these.
 */
const FORMULA_START = /^[=+\-@\t\r']/;
const ESCAPED_START = /^'[=+\-@\t\r']/;

/** A text field's value as a CSV cell that no spreadsheet runs. */
export function textCell(value: string): string {
  return FORMULA_START.test(value) ? `"'${value.replaceAll('"', '""')}"` : csvField(value);
}

/** A text field's value read from a CSV cell: the export's escape undone; any other cell as it is written. */
export function cellText(cell: string): string {
  return ESCAPED_START.test(cell) ? cell.slice(1) : cell;
}

/** One record of cells as they are to be written (csvField or textCell), with the CRLF RFC 4180 ends records with. */
export function csvRecord(cells: readonly string[]): string {
  return `${cells.join(',')}\r\n`;
}

/** A plant's record: its id as a number, its text fields as cells no spreadsheet runs (an absent one empty). */
export function plantCsvRecord(plant: PlantRecord): string {
  return csvRecord([plant.id.toString(), ...PLANT_CONTENT_KEYS.map((key) => textCell(plant[key] ?? ''))]);
}

/** The header row. */
export const CSV_HEADER = csvRecord(CSV_COLUMNS);
