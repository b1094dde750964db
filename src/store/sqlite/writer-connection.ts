/**
 * The writer thread's connection and the writers prepared on it, with an import's upkeep done after its
 * answer (`afterReply`):
 * - A checkpoint: an import's commit does not checkpoint (plant-import.ts), so its answer need not wait.
 * - A new connection: FTS5's pending-terms hash table belongs to the connection, grows with the largest
 *   transaction and never shrinks, and every later index flush walks all of it (bench/README.md, "A connection
 *   that remembers its largest import"). Only closing frees it, so the connection is renewed once no import
 *   is staging in its temp tables.
 */
import type Database from 'better-sqlite3';
import { BatchWriter } from './batch-writer.js';
import { SqliteChangeLogPruner } from './change-log.js';
import { openConnection } from './connection.js';
import { SqliteMaintenance } from './maintenance.js';
import { SqlitePlantImports } from './plant-import.js';
import { SqliteTokenStore } from './token-store.js';
import { SqliteWebhookStore } from './webhook-store.js';
import type {
  DelegatedMethod,
  DelegatedStore,
  PlantWrite,
  PlantWriteResult,
  UntypedCall,
  WriteArgs,
  WriteHandlers,
} from './writer-protocol.js';

/** One opening of the file: the connection and what was prepared on it. */
interface Opened {
  readonly db: Database.Database;
  readonly plants: BatchWriter;
  readonly imports: SqlitePlantImports;
  readonly handlers: WriteHandlers;
}

function open(path: string, busyTimeoutMs: number): Opened {
  const db = openConnection(path, busyTimeoutMs);
  const imports = new SqlitePlantImports(db);
  // The compiler checks this provides each of the DelegatedWrites.
  const handlers: WriteHandlers = {
    maintenance: new SqliteMaintenance(db),
    imports,
    changes: new SqliteChangeLogPruner(db),
    tokens: new SqliteTokenStore(db),
    webhooks: new SqliteWebhookStore(db),
  };
  return { db, plants: new BatchWriter(db), imports, handlers };
}

export class WriterConnection {
  private opened: Opened;
  private checkpointDue = false;
  private renewalDue = false;
  private renewed = 0;

  constructor(
    private readonly path: string,
    private readonly busyTimeoutMs: number,
  ) {
    this.opened = open(path, busyTimeoutMs);
  }

  /** How many times the connection was closed and opened again. */
  get renewals(): number {
    return this.renewed;
  }

  /** One batch of plant writes, one transaction (batch-writer.ts). */
  applyPlantWrites(writes: readonly PlantWrite[]): PlantWriteResult[] {
    return this.opened.plants.apply(writes);
  }

  /** One delegated write, `store.method(...args)`. */
  async call<S extends DelegatedStore, M extends DelegatedMethod<S>>(
    store: S,
    method: M,
    args: WriteArgs<S, M>,
  ): Promise<unknown> {
    const handlers = this.opened.handlers[store] as Record<M, (...args: WriteArgs<S, M>) => unknown>;
    try {
      return await handlers[method](...args);
    } finally {
      // Applied or refused, the import's words went through FTS5's table.
      if (store === 'imports' && method === 'apply') this.checkpointDue = this.renewalDue = true;
    }
  }

  /**
   * Delegated writes of SHARED_TRANSACTION_CALLS in one transaction (one fsync): each call's own transaction is a
   * savepoint in it, so one that fails is undone alone and the rest commit. A failure that ends the transaction
   * itself (SQLite rolls it back on a full or failing disk) fails them all: none of them holds.
   */
  async callTogether(calls: readonly UntypedCall[]): Promise<PromiseSettledResult<unknown>[]> {
    const db = this.opened.db;
    db.exec('BEGIN IMMEDIATE');
    try {
      const settled: PromiseSettledResult<unknown>[] = [];
      for (const { store, method, args } of calls) {
        try {
          const value = await this.call(store, method as DelegatedMethod<typeof store>, args as never);
          settled.push({ status: 'fulfilled', value });
        } catch (reason) {
          if (!db.inTransaction) throw reason;
          settled.push({ status: 'rejected', reason });
        }
      }
      db.exec('COMMIT');
      return settled;
    } catch (error) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw error;
    }
  }

  /**
   * The upkeep a write left behind, once its answer has been sent. Failures are left
   * for later: an automatic checkpoint follows the next commits, and the next
   * import's end tries the renewal again.
   */
  afterReply(): void {
    if (this.checkpointDue) {
      this.checkpointDue = false;
      try {
        this.opened.db.pragma('wal_checkpoint(PASSIVE)');
      } catch {
        // Left to the automatic checkpoints.
      }
    }
    if (this.renewalDue && this.opened.imports.inProgress === 0) this.renew();
  }

  close(): void {
    this.opened.db.close();
  }

  private renew(): void {
    let renewed: Opened;
    try {
      renewed = open(this.path, this.busyTimeoutMs);
    } catch {
      // Renewing only saves work: the open connection still serves.
      return;
    }
    this.opened.db.close();
    this.opened = renewed;
    this.renewalDue = false;
    this.renewed += 1;
  }
}
