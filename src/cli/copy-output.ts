/**
 * What `plantstore copy` prints: progress on stderr (for the person waiting), the
 * verification table on stdout (the result, which a script may keep).
 */
import {
  TABLE_LABELS,
  type CopyProgress,
  type CopyReport,
  type StoreSummary,
  type TableCounts,
} from '../store/copy/copy-store.js';
import { printTable } from './table.js';

const PROGRESS_EVERY_MS = 1000;
const number = (n: number) => n.toLocaleString('en-US');

/** Lines rather than one redrawn, so the progress reads as well in a log as on a terminal. */
export function progressPrinter(out: NodeJS.WritableStream = process.stderr): (progress: CopyProgress) => void {
  let started = performance.now();
  let lastLine = started;
  let current = '';
  return ({ phase, table, done, total }) => {
    const now = performance.now();
    const what = `${phase === 'copy' ? 'copying' : 'verifying'} ${TABLE_LABELS[table]}`;
    if (what !== current) {
      current = what;
      started = now;
      lastLine = now;
    }
    const finished = done === total;
    if (!finished && now - lastLine < PROGRESS_EVERY_MS) return;
    lastLine = now;
    const seconds = (now - started) / 1000;
    // A rate over less than a tenth of a second says little.
    const rate = seconds >= 0.1 && done > 0 ? `, ${number(Math.round(done / seconds))} rows/s` : '';
    out.write(
      `${what}: ${number(done)} of ${number(total)} rows${finished ? ` in ${seconds.toFixed(1)} s` : ''}${rate}\n`,
    );
  };
}

function row(name: string, source: string, target: string): string[] {
  return [name, source, target, source === target ? 'same' : 'DIFFERS'];
}

/** Plants first: what the copy is mostly about. */
const SHOWN: readonly (keyof TableCounts)[] = [
  'plants',
  'tokens',
  'webhook_subscriptions',
  'webhook_events',
  'webhook_deliveries',
  'webhook_delivery_attempts',
  'webhook_recoveries',
  'store_secrets',
];

function figures(s: StoreSummary): Record<string, string> {
  return {
    ...Object.fromEntries(SHOWN.map((table) => [TABLE_LABELS[table], number(s.counts[table])])),
    'pending deliveries': number(s.pendingDeliveries),
    'plant checksum (sha-256)': s.plantChecksum,
  };
}

/** Both sides' figures, side by side, each row marked same or DIFFERS; then the verdict. */
export function printVerification(report: CopyReport, out: NodeJS.WritableStream = process.stdout): void {
  const source = figures(report.source);
  const target = figures(report.target);
  out.write(`source: ${report.source.label}\ntarget: ${report.target.label}\n\n`);
  printTable(
    ['', 'SOURCE', 'TARGET', ''],
    [
      ...Object.keys(source).map((name) => row(name, source[name] ?? '', target[name] ?? '')),
      // The target's may be higher (a replaced store's own was): only lower would differ.
      [
        'version counter',
        report.source.versionCounter.toString(),
        report.target.versionCounter.toString(),
        report.differences.includes('version counter') ? 'DIFFERS' : 'ok',
      ],
    ],
    out,
  );
  out.write(
    report.committed
      ? 'verified: the target holds what the source held; committed.\n'
      : `NOT verified (${report.differences.join(', ')} differ): the target was rolled back, unchanged.\n`,
  );
}
