/**
 * Writes docs/errors.md, every `error` code the service answers with, from the catalogue itself (src/http/errors.ts;
 * `npm run errors:reference`). test/http/error-reference.test.ts fails when the checked-in file no longer matches, so
 * the list cannot drift from the codes the service sends, as a hand-kept table did.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Errors } from '../src/http/errors.js';

export const ERROR_REFERENCE_PATH = fileURLToPath(new URL('../docs/errors.md', import.meta.url));

/** A catalogue text as a table cell: a `|` would end the cell. */
const cell = (text: string): string => text.replace(/\|/g, '\\|');

export function renderErrorReference(): string {
  const rows = Object.entries(Errors)
    .sort(([, a], [, b]) => a.code - b.code)
    .map(([name, entry]) => `| ${entry.code} | ${entry.status} | ${name} | ${cell(entry.meaning)} |`);
  return [
    '# Errors',
    '',
    '<!-- Written by `npm run errors:reference` from src/http/errors.ts; edit the catalogue, not this file. -->',
    '',
    'Every failure is an `Error` record, `{"error": <int32>, "message": <string>}`, with one of these codes. A code is',
    'the HTTP status × 100 plus a sequence number, and is never reused. `message` says what was wrong in this request,',
    'naming each offending field, parameter or header; the meaning below is what the code always means. The OpenAPI',
    'document lists the same catalogue, and each operation lists the codes it can answer.',
    '',
    '| error | status | name | meaning |',
    '|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(ERROR_REFERENCE_PATH, renderErrorReference());
  process.stdout.write(`wrote ${ERROR_REFERENCE_PATH}\n`);
}
