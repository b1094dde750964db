/**
 * CSV as RFC 4180 writes it, one record per line: fields separated by commas, a
 * field with a comma or a double quote quoted, quotes inside doubled. Names and
 * tags never hold a line break (no control characters), so a record never spans
 * lines, and a quoted field left open at the end of its line is an error.
 */

export const CSV_COLUMNS = ['id', 'name', 'tag'] as const;

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
        if (close === -1) return { problem: 'has a quoted field that is not closed on its line (names and tags cannot contain line breaks)' };
        value += line.slice(i, close);
        if (line[close + 1] !== '"') {
          i = close + 1;
          break;
        }
        value += '"';
        i = close + 2;
      }
      fields.push(value);
      if (i < line.length && line[i] !== ',') return { problem: `has text after a closing quote, at character ${i + 1}` };
    } else {
      const comma = line.indexOf(',', i);
      const end = comma === -1 ? line.length : comma;
      const value = line.slice(i, end);
      if (value.includes('"')) return { problem: 'has a double quote inside an unquoted field (quote the field and double the quote)' };
      fields.push(value);
      i = end;
    }
    if (i >= line.length) return { fields };
    i += 1; // the comma
  }
}

function csvField(value: string): string {
  return /[",]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** One record, with the CRLF RFC 4180 ends records with. */
export function csvRecord(fields: readonly string[]): string {
  return `${fields.map(csvField).join(',')}\r\n`;
}
