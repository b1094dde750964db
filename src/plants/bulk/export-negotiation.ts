/**
 * Which format an export answers in: `format` when given, else the Accept header (RFC 9110 12.5.1), read by
 * `negotiator` (q-values, wildcards, `q=0` as "not this"). NDJSON is preferred when the client accepts both alike.
 */
import Negotiator from 'negotiator';
import { failure } from '../../http/errors.js';
import type { ExportFormat } from './export-format.js';

/** The formats by their bare media type, in the order the service prefers them. */
const OFFERED: readonly (readonly [mediaType: string, format: ExportFormat])[] = [
  ['application/x-ndjson', 'ndjson'],
  ['text/csv', 'csv'],
];

export function negotiatedFormat(format: ExportFormat | undefined, accept: string | undefined): ExportFormat {
  const offered = OFFERED.filter(([, one]) => format === undefined || one === format);
  const chosen = new Negotiator({ headers: { accept } }).mediaType(offered.map(([mediaType]) => mediaType));
  const found = offered.find(([mediaType]) => mediaType === chosen);
  if (found === undefined) {
    const names = offered.map(([mediaType]) => mediaType).join(' or ');
    throw failure('NOT_ACCEPTABLE', [names, (accept ?? '').slice(0, 200)]);
  }
  return found[1];
}
