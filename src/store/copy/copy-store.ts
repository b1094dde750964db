/**
 * Copies a whole store into another of either kind: plants with their ids, versions and creation times (so
 * ETags and cursors stay valid), the version counter, the store's secrets, tokens, webhook subscriptions and
 * the whole outbox, so pending deliveries continue from the target.
 *
 * Verified before committing (row counts, pending deliveries, a checksum of the plants read back); a target
 * that fails or does not verify is rolled back, never half filled. It must be empty unless `replace` is set,
 * which empties it in the same transaction.
 */
import type { CopySource, CopyTarget } from './endpoint.js';
import { CopyError } from './errors.js';
import { openSource, openTarget, refuseSameStore } from './open-endpoints.js';
import { COPY_TABLES, TABLE_LABELS } from './rows.js';
import { countRows, differences, plantChecksumOf, type StoreSummary, type TableCounts } from './summary.js';
import { transfer, type CopyProgress } from './transfer.js';

export type { CopyProgress } from './transfer.js';
export type { StoreSummary, TableCounts } from './summary.js';
export { CopyError } from './errors.js';
export { TABLE_LABELS } from './rows.js';

/** Rows per chunk: one statement's worth, a few MB at most. */
export const DEFAULT_CHUNK_SIZE = 5000;

export interface CopyOptions {
  /** Empty a target that holds data rather than refuse it. */
  readonly replace?: boolean;
  readonly chunkSize?: number;
  readonly onProgress?: (progress: CopyProgress) => void;
}

export interface CopyReport {
  readonly source: StoreSummary;
  readonly target: StoreSummary;
  /** What differs (differences in summary.ts); empty when the copy verified. */
  readonly differences: readonly string[];
  /** True when the target was committed: the copy verified. */
  readonly committed: boolean;
  /** What the target held before `replace` emptied it; undefined when it was empty. */
  readonly replaced: TableCounts | undefined;
}

/** Copies the store at `from` into the one at `to` (created if it is a SQLite file that does not exist). */
export async function copyStore(from: string, to: string, options: CopyOptions = {}): Promise<CopyReport> {
  refuseSameStore(from, to);
  const source = await openSource(from);
  try {
    const target = await openTarget(to);
    try {
      return await copyBetween(source, target, options);
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

/** What a target holds, e.g. 'plants: 44, tokens: 3' ('' for nothing); every store has its own secrets, so they do not
 * count. */
function held(counts: TableCounts): string {
  const tables = ['plants', ...COPY_TABLES.filter((table) => table !== 'plants' && table !== 'store_secrets')] as const;
  return tables
    .filter((table) => counts[table] > 0)
    .map((table) => `${TABLE_LABELS[table]}: ${counts[table]}`)
    .join(', ');
}

async function emptyTarget(target: CopyTarget, replace: boolean): Promise<TableCounts | undefined> {
  const counts = await countRows(target);
  const rows = held(counts);
  if (rows === '') return undefined;
  if (!replace) {
    throw new CopyError(
      `--to: the target store ${target.label} is not empty (${rows}); copy into an empty store, or pass --replace to replace its contents`,
    );
  }
  await target.clear();
  return counts;
}

export async function copyBetween(
  source: CopySource,
  target: CopyTarget,
  options: CopyOptions = {},
): Promise<CopyReport> {
  const chunkSize = options.chunkSize ?? DEFAULT_CHUNK_SIZE;
  const onProgress = options.onProgress ?? (() => {});
  const replaced = await emptyTarget(target, options.replace === true);

  const totals = await countRows(source);
  const sourceCounter = await source.versionCounter();
  const sourcePending = await source.pendingDeliveries();
  const moved = await transfer({ source, target, chunkSize, totals, onProgress });
  await target.raiseVersionCounter(sourceCounter > moved.maxVersion ? sourceCounter : moved.maxVersion);
  await target.finish();

  const sourceSummary: StoreSummary = {
    kind: source.kind,
    label: source.label,
    counts: totals,
    pendingDeliveries: sourcePending,
    plantChecksum: moved.plantChecksum,
    versionCounter: sourceCounter,
  };
  const targetSummary: StoreSummary = {
    kind: target.kind,
    label: target.label,
    counts: await countRows(target),
    pendingDeliveries: await target.pendingDeliveries(),
    plantChecksum: await plantChecksumOf(target, chunkSize, (done) =>
      onProgress({ phase: 'verify', table: 'plants', done, total: totals.plants }),
    ),
    versionCounter: await target.versionCounter(),
  };
  const found = differences(sourceSummary, targetSummary);
  if (found.length === 0) await target.commit();
  return { source: sourceSummary, target: targetSummary, differences: found, committed: found.length === 0, replaced };
}
