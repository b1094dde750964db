/**
 * Moving the rows: table by table, parents first, in chunks read in key order, so memory holds one chunk
 * whatever the store's size. Plants are hashed from the very rows the target receives.
 */
import { PlantChecksum } from './checksum.js';
import type { CopySource, CopyTarget } from './endpoint.js';
import { COPY_TABLES, keyOf, type CopyRows, type CopyTable, type RowKey } from './rows.js';
import type { TableCounts } from './summary.js';

export interface CopyProgress {
  /** 'copy' while rows move; 'verify' while the target's plants are read back to hash them. */
  readonly phase: 'copy' | 'verify';
  readonly table: CopyTable;
  /** Rows done so far in this table. */
  readonly done: number;
  /** Rows the table has in the source. */
  readonly total: number;
}

export interface Transfer {
  readonly plantChecksum: string;
  /** The highest version among the plants copied (0 when none). */
  readonly maxVersion: bigint;
}

interface Context {
  readonly source: CopySource;
  readonly target: CopyTarget;
  readonly chunkSize: number;
  readonly totals: TableCounts;
  readonly onProgress: (progress: CopyProgress) => void;
}

async function copyTable<T extends CopyTable>(
  context: Context,
  table: T,
  onChunk: (rows: CopyRows[T][]) => void = () => {},
): Promise<void> {
  const { source, target, chunkSize, totals, onProgress } = context;
  let after: RowKey | undefined;
  let done = 0;
  onProgress({ phase: 'copy', table, done, total: totals[table] });
  for (;;) {
    const rows = await source.read(table, after, chunkSize);
    if (rows.length > 0) {
      onChunk(rows);
      await target.insert(table, rows);
      done += rows.length;
      onProgress({ phase: 'copy', table, done, total: totals[table] });
    }
    const last = rows.at(-1);
    if (last === undefined || rows.length < chunkSize) return;
    after = keyOf(last);
  }
}

export async function transfer(context: Context): Promise<Transfer> {
  const checksum = new PlantChecksum();
  let maxVersion = 0n;
  for (const table of COPY_TABLES) {
    if (table !== 'plants') {
      await copyTable(context, table);
      continue;
    }
    await copyTable(context, 'plants', (plants) => {
      checksum.add(plants);
      for (const { version } of plants) if (version > maxVersion) maxVersion = version;
    });
  }
  return { plantChecksum: checksum.digest(), maxVersion };
}
