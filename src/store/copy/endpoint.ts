/**
 * The two ends of a copy, each one connection holding one transaction: the source's a read-only snapshot, so
 * counts, rows and checksum describe one state even while a service writes; the target's holds every write,
 * so a copy that fails or does not verify leaves it as it was.
 */
import type { CopyRows, CopyTable, RowKey } from './rows.js';

export interface CopyReader {
  readonly kind: 'sqlite' | 'postgres';
  /** The store's URL with any password hidden, for messages. */
  readonly label: string;
  /** Up to `limit` rows of `table` in key order, after the row with key `after` (from the first when undefined). */
  read<T extends CopyTable>(table: T, after: RowKey | undefined, limit: number): Promise<CopyRows[T][]>;
  count(table: CopyTable): Promise<number>;
  /** Deliveries not sent yet (status 'pending'). */
  pendingDeliveries(): Promise<number>;
  /** The last plant version the store handed out (a new change gets a higher one). */
  versionCounter(): Promise<bigint>;
}

export interface CopySource extends CopyReader {
  /** Ends the snapshot and the connection. */
  close(): Promise<void>;
}

export interface CopyTarget extends CopyReader {
  insert<T extends CopyTable>(table: T, rows: readonly CopyRows[T][]): Promise<void>;
  /** Deletes every row of every table the copy writes (store secrets are overwritten instead). */
  clear(): Promise<void>;
  /** Makes the version counter at least `last`, never lower: no version is handed out twice. */
  raiseVersionCounter(last: bigint): Promise<void>;
  /** After the rows are in: whatever the database keeps beside them (PostgreSQL's identity sequences). */
  finish(): Promise<void>;
  commit(): Promise<void>;
  /** Rolls back (if not committed) and closes the connection. Safe to call at any time. */
  close(): Promise<void>;
}
