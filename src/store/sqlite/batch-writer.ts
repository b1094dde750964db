/**
 * Applies a batch of plant writes as ONE transaction, so one fsync: what group commit amortises. The writes
 * apply in order, each seeing those before it (as if run one by one); any failure rolls back the batch.
 * Each change takes the next version (counter read and written once per batch) and writes its webhook event
 * in the same transaction; the search index and the change log get the batch's changes at its end.
 */
import type Database from 'better-sqlite3';
import { FIND_ROW_COLUMNS, findRow } from '../../domain/search-text.js';
import {
  changed,
  PLANT_CONTENT_KEYS,
  PLANT_KEYS,
  samePlant,
  valuesOf,
  versionMatches,
  withoutAbsent,
  type PlantContent,
  type PlantContentKey,
  type PlantRecord,
} from '../../domain/plant.js';
import { plantColumnsSql, plantContentColumnsSql } from '../../domain/plant-sql.js';
import { findColumnsOf, wordsColumnsSql } from '../../domain/plant-find-sql.js';
import { ChangeLogEntries, ChangeLogWriter } from './change-log-writes.js';
import { keptWords, SearchIndex, SearchIndexChanges, type IndexedWords } from './search-index.js';
import { SqliteWebhookOutbox } from './webhook-store.js';
import type { PlantState, PlantWrite, PlantWriteResult } from './writer-protocol.js';

const asPlant = (id: bigint, content: PlantContent): PlantRecord => withoutAbsent({ id, ...content });

/** The columns a create writes besides the plant's fields, in the order the INSERT binds them. */
const ROW_COLUMNS = ['created_at', 'version', ...FIND_ROW_COLUMNS];

/** `?, ?, ...`: `count` positional parameters. */
const parameters = (count: number): string => Array.from({ length: count }, () => '?').join(', ');

/** What one batch's writes share: its time, the subscribed event types, the version counter, the search index's and the
 * change log's changes. */
interface BatchContext {
  readonly now: number;
  readonly outbox: ReturnType<SqliteWebhookOutbox['forBatch']>;
  readonly search: SearchIndexChanges;
  readonly changes: ChangeLogEntries;
  version: bigint;
}

/** A plant's row: its state and the words the search index holds for it. */
type StoredRow = PlantState & IndexedWords;

function stateOf(row: StoredRow): PlantState {
  const state: Partial<Record<keyof PlantState, unknown>> = {};
  for (const key of PLANT_CONTENT_KEYS) state[key] = row[key];
  state.version = row.version;
  return state as PlantState;
}

export class BatchWriter {
  private readonly insert: Database.Statement;
  private readonly selectById: Database.Statement;
  /** One UPDATE per set of changed fields, prepared when first needed (updateOf). */
  private readonly updates = new Map<string, Database.Statement>();
  private readonly prepare: (sql: string) => Database.Statement;
  private readonly deleteById: Database.Statement;
  private readonly readCounter: Database.Statement;
  private readonly writeCounter: Database.Statement;
  private readonly outbox: SqliteWebhookOutbox;
  private readonly searchIndex: SearchIndex;
  private readonly changeLog: ChangeLogWriter;
  private readonly applyAll: Database.Transaction<(writes: readonly PlantWrite[]) => PlantWriteResult[]>;

  constructor(db: Database.Database) {
    // safeIntegers: ids and versions are bound and read as bigint, never rounded through a double.
    const prepare = (sql: string) => db.prepare(sql).safeIntegers(true);
    this.prepare = prepare;
    // The plant's columns come from its definition, bound in PLANT_KEYS order; the row's own columns follow them.
    const columns = [plantColumnsSql(), ...ROW_COLUMNS].join(', ');
    this.insert = prepare(`INSERT INTO plants (${columns})
      VALUES (${parameters(PLANT_KEYS.length + ROW_COLUMNS.length)}) ON CONFLICT (id) DO NOTHING`);
    this.selectById = prepare(
      `SELECT ${plantContentColumnsSql()}, version, ${wordsColumnsSql()} FROM plants WHERE id = ?`,
    );
    this.deleteById = prepare(`DELETE FROM plants WHERE id = ? RETURNING tag, ${wordsColumnsSql()}`);
    this.readCounter = prepare('SELECT last FROM plant_version_counter').pluck();
    this.writeCounter = prepare('UPDATE plant_version_counter SET last = ?');
    this.outbox = new SqliteWebhookOutbox(db);
    this.searchIndex = new SearchIndex(db);
    this.changeLog = new ChangeLogWriter(db);
    this.applyAll = db.transaction((writes: readonly PlantWrite[]) => {
      const first = this.readCounter.get() as bigint;
      const batch: BatchContext = {
        now: Date.now(),
        outbox: this.outbox.forBatch(),
        search: new SearchIndexChanges(),
        changes: new ChangeLogEntries(),
        version: first,
      };
      const results = writes.map((write) => this.applyOne(write, batch));
      if (batch.version !== first) this.writeCounter.run(batch.version);
      this.searchIndex.apply(batch.search);
      this.changeLog.write(batch.changes, batch.now);
      return results;
    });
  }

  /** IMMEDIATE takes the write lock up front, so another process cannot interleave. */
  apply(writes: readonly PlantWrite[]): PlantWriteResult[] {
    return this.applyAll.immediate(writes);
  }

  /**
   * The UPDATE that sets only the `changed` fields and the find columns made from them: SQLite rewrites the index
   * entries of every column an UPDATE sets, changed or not, so a rename that set the tag too would rewrite its
   * plants_tag_id entry for nothing (bench/README.md).
   */
  private updateOf(changed: readonly PlantContentKey[]): Database.Statement {
    const key = changed.join(' ');
    let statement = this.updates.get(key);
    if (statement === undefined) {
      const columns = changed.flatMap((field) => [field, ...findColumnsOf(field)]);
      const set = columns.map((column) => `${column} = @${column}`).join(', ');
      statement = this.prepare(`UPDATE plants SET ${set}, version = @version WHERE id = @id`);
      this.updates.set(key, statement);
    }
    return statement;
  }

  private stored(id: bigint): StoredRow | undefined {
    return this.selectById.get(id) as StoredRow | undefined;
  }

  private applyOne(write: PlantWrite, batch: BatchContext): PlantWriteResult {
    switch (write.op) {
      case 'create':
        return this.create(write, batch);
      case 'update':
        return this.update(write, batch);
      case 'delete':
        return this.delete(write, batch);
    }
  }

  private create(write: PlantWrite & { op: 'create' }, batch: BatchContext): PlantWriteResult {
    const plant = asPlant(write.id, write);
    const version = batch.version + 1n;
    // The primary key decides who wins: INSERT .. ON CONFLICT DO NOTHING, then read
    // the row that is there (never check-then-insert).
    const find = findRow(write);
    const fields = PLANT_KEYS.map((key) => write[key]);
    const findValues = FIND_ROW_COLUMNS.map((column) => find[column]);
    if (this.insert.run(...fields, batch.now, version, ...findValues).changes === 1) {
      batch.version = version;
      batch.outbox.created(plant);
      batch.changes.created(plant);
      batch.search.added(write.id, find);
      return { kind: 'created', version };
    }
    const state = stateOf(this.stored(write.id) as StoredRow);
    return samePlant(asPlant(write.id, state), plant) ? { kind: 'replayed', state } : { kind: 'conflict', state };
  }

  private update(write: PlantWrite & { op: 'update' }, batch: BatchContext): PlantWriteResult {
    const row = this.stored(write.id);
    if (row === undefined) return { kind: 'not-found' };
    const state = stateOf(row);
    if (!versionMatches(write.expected, state.version)) return { kind: 'precondition-failed', state };
    const before = asPlant(write.id, state);
    const after = changed(before, write);
    if (samePlant(before, after)) return { kind: 'unchanged', state };
    const version = (batch.version += 1n);
    const { id, ...content } = valuesOf(after);
    const find = findRow(after);
    const words = keptWords(row, before, after, find);
    const changedKeys = PLANT_CONTENT_KEYS.filter((key) => after[key] !== before[key]);
    this.updateOf(changedKeys).run({ ...content, ...find, ...words, version, id });
    batch.search.changed(write.id, row, words);
    batch.outbox.updated(before, after);
    batch.changes.updated(before, after);
    return { kind: 'updated', state: { ...content, version } };
  }

  private delete(write: PlantWrite & { op: 'delete' }, batch: BatchContext): PlantWriteResult {
    if (write.expected !== undefined) {
      const row = this.stored(write.id);
      if (row === undefined) return { kind: 'not-found' };
      if (!versionMatches(write.expected, row.version)) return { kind: 'precondition-failed', state: stateOf(row) };
    }
    const row = this.deleteById.get(write.id) as (IndexedWords & { tag: string | null }) | undefined;
    if (row === undefined) return { kind: 'not-found' };
    batch.search.removed(write.id, row);
    batch.outbox.deleted(write.id, row.tag);
    batch.changes.deleted(write.id, row.tag);
    return { kind: 'deleted' };
  }
}
