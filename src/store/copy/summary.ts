/** What a copy's verification compares, read alike on both sides: counts, pending deliveries, checksum, counter. */
import { PlantChecksum } from './checksum.js';
import type { CopyReader } from './endpoint.js';
import { COPY_TABLES, keyOf, type CopyTable, type RowKey } from './rows.js';

export type TableCounts = Readonly<Record<CopyTable, number>>;

export interface StoreSummary {
  readonly kind: 'sqlite' | 'postgres';
  readonly label: string;
  readonly counts: TableCounts;
  readonly pendingDeliveries: number;
  /** SHA-256, hex. */
  readonly plantChecksum: string;
  /** The last version handed out: the target's must be at least the source's. */
  readonly versionCounter: bigint;
}

/** Table by table, in one statement each (no Promise.all: a connection runs one at a time anyway). */
export async function countRows(reader: CopyReader): Promise<TableCounts> {
  const counts: Partial<Record<CopyTable, number>> = {};
  for (const table of COPY_TABLES) counts[table] = await reader.count(table);
  return counts as TableCounts;
}

/** Reads every plant (in chunks) to hash them; `onChunk` hears how many so far. */
export async function plantChecksumOf(
  reader: CopyReader,
  chunkSize: number,
  onChunk: (read: number) => void = () => {},
): Promise<string> {
  const checksum = new PlantChecksum();
  let after: RowKey | undefined;
  let read = 0;
  onChunk(read);
  for (;;) {
    const plants = await reader.read('plants', after, chunkSize);
    checksum.add(plants);
    read += plants.length;
    if (plants.length > 0) onChunk(read);
    const last = plants.at(-1);
    if (last === undefined || plants.length < chunkSize) return checksum.digest();
    after = keyOf(last);
  }
}

/** The figures that differ between the two sides, by name; empty when the copy verifies. */
export function differences(source: StoreSummary, target: StoreSummary): string[] {
  const found: string[] = COPY_TABLES.filter((table) => source.counts[table] !== target.counts[table]);
  if (source.pendingDeliveries !== target.pendingDeliveries) found.push('pending deliveries');
  if (source.plantChecksum !== target.plantChecksum) found.push('plant checksum');
  if (target.versionCounter < source.versionCounter) found.push('version counter');
  return found;
}
