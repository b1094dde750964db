/** Prints rows as an aligned plain-text table (for people; scripts use --json). */
export function printTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  out: NodeJS.WritableStream = process.stdout,
): void {
  if (rows.length === 0) {
    out.write('(none)\n');
    return;
  }
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  out.write(`${[line(headers), ...rows.map(line)].join('\n')}\n`);
}
