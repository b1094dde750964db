/**
 * The bench's output: one table on stdout, the same rows (with every run) as JSON
 * under bench/results/. Repeated runs are summarised by their median.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LoadResult } from './load-runner.js';

export interface Row {
  readonly case: string;
  /** 'sqlite', 'postgres', or 'floor' for the bare server. */
  readonly store: string;
  /** Plants stored when the case started. */
  readonly plants: number;
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  /** Median CPU time the server used per request, in µs. */
  readonly cpuMicros: number;
  /** VmHWM of the service after the case (peak since it started); undefined for the floor. */
  readonly peakRssMb?: number;
  /** Median req/s of the service over median req/s of the floor, from interleaved runs. */
  readonly ratio?: number;
  /** Fixed-load run at half the measured maximum: offered and achieved rate, its p99. */
  readonly halfLoad?: {
    readonly offered: number;
    readonly achieved: number;
    readonly p99: number;
    readonly p50: number;
  };
  readonly runs: readonly LoadResult[];
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

export function summarise(kase: string, store: string, plants: number, runs: LoadResult[]): Row {
  return {
    case: kase,
    store,
    plants,
    rps: median(runs.map((r) => r.rps)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    cpuMicros: median(runs.map((r) => r.cpuMicrosPerRequest ?? Number.NaN)),
    runs,
  };
}

const fixed = (value: number | undefined, digits: number) =>
  value === undefined || Number.isNaN(value) ? '-' : value.toFixed(digits);
const plantsLabel = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1000 ? `${n / 1000}k` : String(n));

export function formatTable(rows: readonly Row[]): string {
  const header = [
    'case',
    'store',
    'plants',
    'req/s',
    'p50 ms',
    'p99 ms',
    'CPU µs/req',
    'peak RSS MB',
    'ratio to floor',
    'p99 ms @ half max (offered/achieved req/s)',
  ];
  const lines = rows.map((row) => [
    row.case,
    row.store,
    plantsLabel(row.plants),
    Math.round(row.rps).toString(),
    fixed(row.p50, 2),
    fixed(row.p99, 2),
    fixed(row.cpuMicros, 0),
    fixed(row.peakRssMb, 0),
    row.ratio === undefined ? '-' : `${row.ratio.toFixed(2)}x`,
    row.halfLoad === undefined
      ? '-'
      : `${row.halfLoad.p99.toFixed(2)} (${Math.round(row.halfLoad.offered)}/${Math.round(row.halfLoad.achieved)})`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] as string).length)));
  const format = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(' | ')} |`;
  return [format(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...lines.map(format)].join('\n');
}

export function writeResults(directory: string, document: object): string {
  mkdirSync(directory, { recursive: true });
  const file = join(directory, `bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(document, null, 2)}\n`);
  return file;
}
