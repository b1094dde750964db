/**
 * Applies a batch of plant writes as ONE transaction: one commit, so one fsync, for
 * the whole batch. This is what group commit amortises.
 *
 * Within the batch the writes are applied in order, each seeing the ones before it,
 * so the outcome is exactly that of running them one by one: of two creates of one
 * id, the first inserts and the second is a replay (same name and tag) or a conflict
 * with the first's row. If anything fails, the whole transaction is rolled back and
 * the error is thrown: nothing of the batch is stored and every write in it fails.
 *
 * A created plant's webhook event is written in the same transaction (the outbox),
 * so the plant and its event are committed together or not at all.
 */
import type Database from 'better-sqlite3';
import { samePlant } from '../../plants/same-plant.js';
import type { PlantRecord } from '../types.js';
import { SqliteWebhookOutbox } from './webhook-store.js';
import type { PlantWrite, PlantWriteResult } from './writer-protocol.js';

interface StoredContent {
  name: string;
  tag: string | null;
}

const asPlant = (id: bigint, { name, tag }: StoredContent): PlantRecord => (tag === null ? { id, name } : { id, name, tag });

export class BatchWriter {
  private readonly insert: Database.Statement;
  private readonly selectById: Database.Statement;
  private readonly deleteById: Database.Statement;
  private readonly outbox: SqliteWebhookOutbox;
  private readonly anySubscription: Database.Statement;
  private readonly applyAll: Database.Transaction<(writes: readonly PlantWrite[]) => PlantWriteResult[]>;

  constructor(db: Database.Database) {
    // safeIntegers: ids are bound and read as bigint, never rounded through a double.
    const prepare = (sql: string) => db.prepare(sql).safeIntegers(true);
    this.insert = prepare('INSERT INTO plants (id, name, tag, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING');
    this.selectById = prepare('SELECT name, tag FROM plants WHERE id = ?');
    this.deleteById = prepare('DELETE FROM plants WHERE id = ?');
    this.outbox = new SqliteWebhookOutbox(db);
    this.anySubscription = db.prepare('SELECT EXISTS (SELECT 1 FROM webhook_subscriptions)').pluck();
    this.applyAll = db.transaction((writes: readonly PlantWrite[]) => {
      const now = Date.now();
      // Asked once per batch, not per create: with no subscriber, the outbox would
      // write nothing, yet building each event (random id, JSON) costs as much as the
      // insert. Exact: the batch's transaction holds the write lock, so no subscription
      // can appear (from this process or another) before it commits.
      const notify = this.anySubscription.get() === 1;
      return writes.map((write) => this.applyOne(write, now, notify));
    });
  }

  /** IMMEDIATE takes the write lock up front, so another process cannot interleave. */
  apply(writes: readonly PlantWrite[]): PlantWriteResult[] {
    return this.applyAll.immediate(writes);
  }

  private applyOne(write: PlantWrite, now: number, notify: boolean): PlantWriteResult {
    if (write.op === 'delete') return { kind: 'deleted', found: this.deleteById.run(write.id).changes === 1 };
    const plant = asPlant(write.id, write);
    // The primary key decides who wins: INSERT .. ON CONFLICT DO NOTHING, then read
    // the row that is there (never check-then-insert).
    if (this.insert.run(write.id, write.name, write.tag, now).changes === 1) {
      if (notify) this.outbox.plantCreated(plant, now);
      return { kind: 'created' };
    }
    const existing = this.selectById.get(write.id) as StoredContent;
    return samePlant(asPlant(write.id, existing), plant)
      ? { kind: 'replayed' }
      : { kind: 'conflict', name: existing.name, tag: existing.tag };
  }
}
