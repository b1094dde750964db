/**
 * Imports on SQLite, in the writer thread (the process's only writer).
 *
 * Each import stages its rows in a TEMP table of the writer's connection, one
 * small transaction per chunk: a temp table lives outside the store's file (SQLite
 * keeps it in a temp file it unlinked at creation), so staging neither takes the
 * store's write lock nor fsyncs, and a process that dies mid-import leaves nothing
 * behind. Apply then moves the rows into `plants` in ONE transaction, as a batch
 * of creates would: first line of an id wins, a later line with the same name and
 * tag is unchanged, with another name or tag a conflict.
 *
 * The rows go in ordered by id: the table and its indexes then grow mostly at one
 * end instead of being written all over (bench/README.md, "Import and export");
 * lines that came in id order are read in line order, which is the same, unsorted.
 * The created plants' words go into the search index in one more statement, in the
 * same order (search-index.ts), and their plant.created entries into the change log
 * in another, in line order (change-log-writes.ts).
 */
import type Database from 'better-sqlite3';
import { PLANT_CREATED } from '../../domain/events.js';
import { findColumns } from '../../domain/search-text.js';
import { PLANT_KEYS, withoutAbsent, type PlantValues } from '../../domain/plant.js';
import { plantColumnDefinitionsSql, plantColumnsSql, plantsDifferSql } from '../../domain/plant-sql.js';
import type { ImportConflict, ImportMode, ImportOutcome, ImportRow } from '../types.js';
import { APPEND_CHANGES } from './change-log-writes.js';
import { SqliteWebhookOutbox } from './webhook-store.js';

const TEMP_CACHE_KIB = 2048;
/**
 * The writer's page cache while an import is applied. Its two sorts by id (rows
 * into plants, words into the search index; none when the lines came in id order) each hold as much in memory as the
 * page cache may before spilling to temp files, so with the usual 8 MB the apply
 * added both to the writer thread's memory; 2 MB takes 13 MB off an import's
 * peak, at a cost in time within the noise of the runs that measured it
 * (bench/README.md, "Import and export memory").
 */
const APPLY_CACHE_KIB = 2048;

/** The staged columns, in the temp table's order: line is the rowid (lines arrive in order, so staging appends). */
const STAGED_COLUMNS = ['line', ...PLANT_KEYS, 'name_key', 'name_words', 'tag_words'] as const;
const STAGED_DEFINITIONS =
  `line INTEGER PRIMARY KEY, ${plantColumnDefinitionsSql('sqlite')}, ` +
  'name_key TEXT NOT NULL, name_words TEXT NOT NULL, tag_words TEXT NOT NULL';

/** Appends a line's values to `pending`, in the temp table's order. */
function pushStaged(pending: unknown[], row: ImportRow): void {
  const find = findColumns(row.name, row.tag);
  const staged: Record<(typeof STAGED_COLUMNS)[number], unknown> = {
    ...row,
    name_key: find.nameKey,
    name_words: find.nameWords,
    tag_words: find.tagWords,
  };
  for (const column of STAGED_COLUMNS) pending.push(staged[column]);
}

/**
 * Staged rows per INSERT: each statement run costs a call into SQLite and a
 * statement's set-up, a large share of a row's when staged one by one
 * (bench/README.md, "Staging ten rows a statement").
 */
const ROWS_PER_INSERT = 10;

interface Staging {
  readonly table: string;
  /** One row, and ROWS_PER_INSERT rows. */
  readonly insertOne: Database.Statement;
  readonly insertMany: Database.Statement;
  rows: number;
  lastLine: number;
  /** The last staged id while every line's id was above the one before. */
  lastId: bigint | undefined;
  /** Whether line order is id order (no id twice): an export's file, or any file sorted by id. */
  inIdOrder: boolean;
}

/**
 * How to read the staged rows by id, the first line of an id first. When the lines
 * came in id order that is line order, the staging table's rowid: read as stored,
 * with no sort of every row through the sorter's temp files (bench/README.md,
 * "An import in id order").
 */
function idOrder(staging: Staging): string {
  return staging.inIdOrder ? 'line' : 'id, line';
}

/**
 * The staged lines that created their plant, as `s`, each with that plant as `p`:
 * the line whose version (the import's base, the one parameter, plus its line) the
 * plant has. Lines that were unchanged or conflicted have none.
 */
function createdLines(staging: Staging): string {
  return `FROM ${staging.table} s JOIN plants p ON p.id = s.id AND p.version = ? + s.line`;
}

/** Thrown inside the apply transaction to roll it back with its report. */
class Rejected extends Error {
  constructor(readonly outcome: ImportOutcome) {
    super('import rejected');
  }
}

export class SqlitePlantImports {
  private readonly imports = new Map<number, Staging>();
  private nextId = 1;
  private readonly outbox: SqliteWebhookOutbox;
  private readonly readCounter: Database.Statement;
  private readonly writeCounter: Database.Statement;

  constructor(private readonly db: Database.Database) {
    // The temp schema's own page cache (16 MB by default): staging only appends and
    // apply reads it once in order, so a small cache costs nothing and keeps the
    // writer thread's memory down during an import.
    db.pragma(`temp.cache_size = -${TEMP_CACHE_KIB}`);
    this.outbox = new SqliteWebhookOutbox(db);
    this.readCounter = db.prepare('SELECT last FROM plant_version_counter').pluck().safeIntegers(true);
    this.writeCounter = db.prepare('UPDATE plant_version_counter SET last = ?');
  }

  /** How many imports have begun and are neither applied nor aborted. */
  get inProgress(): number {
    return this.imports.size;
  }

  /** Starts an import; its number names it in the calls that follow. */
  begin(): number {
    const id = this.nextId++;
    const table = `temp.plant_import_${id}`;
    this.db.exec(`CREATE TABLE ${table} (${STAGED_DEFINITIONS})`);
    const row = `(${STAGED_COLUMNS.map(() => '?').join(', ')})`;
    const into = `INSERT INTO ${table} (${STAGED_COLUMNS.join(', ')}) VALUES`;
    const insertOne = this.db.prepare(`${into} ${row}`);
    const insertMany = this.db.prepare(`${into} ${Array(ROWS_PER_INSERT).fill(row).join(', ')}`);
    this.imports.set(id, { table, insertOne, insertMany, rows: 0, lastLine: 0, lastId: undefined, inIdOrder: true });
    return id;
  }

  stage(importId: number, rows: readonly ImportRow[]): void {
    const staging = this.staging(importId);
    const insertAll = this.db.transaction(() => {
      const pending: unknown[] = [];
      for (const row of rows) {
        if (staging.inIdOrder) {
          staging.inIdOrder = staging.lastId === undefined || row.id > staging.lastId;
          staging.lastId = row.id;
        }
        pushStaged(pending, row);
        if (pending.length === ROWS_PER_INSERT * STAGED_COLUMNS.length) {
          staging.insertMany.run(pending);
          pending.length = 0;
        }
      }
      const width = STAGED_COLUMNS.length;
      for (let at = 0; at < pending.length; at += width) staging.insertOne.run(pending.slice(at, at + width));
    });
    insertAll();
    staging.rows += rows.length;
    staging.lastLine = Math.max(staging.lastLine, rows.at(-1)?.line ?? 0);
  }

  /**
   * Applies the import in one transaction. Its commit does not checkpoint: copying an
   * import's pages from the WAL into the database file took longer than the commit
   * itself (bench/README.md, "An import's answer without its checkpoint"), and
   * durability needs only the WAL's fsync. The writer checkpoints once the answer is
   * on its way (writer-connection.ts).
   */
  apply(importId: number, mode: ImportMode, reportLimit: number): ImportOutcome {
    const staging = this.staging(importId);
    const cacheSize = this.db.pragma('cache_size', { simple: true }) as number;
    const autocheckpoint = this.db.pragma('wal_autocheckpoint', { simple: true }) as number;
    this.db.pragma(`cache_size = -${APPLY_CACHE_KIB}`);
    this.db.pragma('wal_autocheckpoint = 0');
    try {
      return this.db.transaction(() => this.applyStaged(staging, mode, reportLimit)).immediate();
    } catch (error) {
      if (error instanceof Rejected) return error.outcome;
      throw error;
    } finally {
      this.db.pragma(`cache_size = ${cacheSize}`);
      this.db.pragma(`wal_autocheckpoint = ${autocheckpoint}`);
      this.abort(importId);
    }
  }

  abort(importId: number): void {
    const staging = this.imports.get(importId);
    if (staging === undefined) return;
    this.imports.delete(importId);
    this.db.exec(`DROP TABLE IF EXISTS ${staging.table}`);
  }

  private staging(importId: number): Staging {
    const staging = this.imports.get(importId);
    if (staging === undefined) throw new Error(`no import ${importId} is in progress`);
    return staging;
  }

  private applyStaged(staging: Staging, mode: ImportMode, reportLimit: number): ImportOutcome {
    const now = Date.now();
    const base = this.readCounter.get() as bigint;
    // Every created plant takes a version above the counter: base + its line is unique.
    const created = this.db
      .prepare(
        `INSERT INTO plants (${plantColumnsSql()}, created_at, version, name_key, name_words, tag_words)
        SELECT ${plantColumnsSql()}, ?, ? + line, name_key, name_words, tag_words
        FROM ${staging.table} WHERE true ORDER BY ${idOrder(staging)}
        ON CONFLICT (id) DO NOTHING`,
      )
      .run(now, base).changes;
    const { conflicts, conflictCount } =
      created === staging.rows ? { conflicts: [], conflictCount: 0 } : this.conflicts(staging, reportLimit);
    if (mode === 'all' && conflictCount > 0) throw new Rejected({ kind: 'rejected', conflicts, conflictCount });
    if (created > 0) {
      this.writeCounter.run(base + BigInt(staging.lastLine));
      this.indexCreated(staging, base, created);
      this.logCreated(staging, base, now);
      this.emitCreated(staging, base, now);
    }
    return { kind: 'applied', created, unchanged: staging.rows - created - conflictCount, conflicts, conflictCount };
  }

  /** The created plants' words into the search index: every staged line's when each created its plant, else those whose
   * plant got that line's version. */
  private indexCreated(staging: Staging, base: bigint, created: number): void {
    const into = 'INSERT INTO plants_search (rowid, name_words, tag_words)';
    if (created === staging.rows) {
      this.db
        .prepare(`${into} SELECT id, name_words, tag_words FROM ${staging.table} ORDER BY ${idOrder(staging)}`)
        .run();
    } else {
      this.db
        .prepare(`${into} SELECT s.id, s.name_words, s.tag_words ${createdLines(staging)} ORDER BY s.id`)
        .run(base);
    }
  }

  /** A plant.created entry in the change log for each line that created its plant (its plant has that line's version),
   * in line order. */
  private logCreated(staging: Staging, base: bigint, now: number): void {
    this.db
      .prepare(
        `${APPEND_CHANGES} SELECT '${PLANT_CREATED}', p.id, p.tag, p.json, ? ${createdLines(staging)} ORDER BY s.line`,
      )
      .run(now, base);
  }

  /** Lines whose id now holds another name or tag: stored before, or created by an earlier line. */
  private conflicts(staging: Staging, reportLimit: number): { conflicts: ImportConflict[]; conflictCount: number } {
    const from = `FROM ${staging.table} s JOIN plants p ON p.id = s.id WHERE ${plantsDifferSql('sqlite', 'p', 's')}`;
    const conflictCount = this.db.prepare(`SELECT count(*) ${from}`).pluck().get() as number;
    const rows = this.db
      .prepare(`SELECT s.line, s.id ${from} ORDER BY s.line LIMIT ?`)
      .safeIntegers(true)
      .all(reportLimit) as { line: bigint; id: bigint }[];
    return { conflicts: rows.map((row) => ({ line: Number(row.line), id: row.id })), conflictCount };
  }

  /**
   * The outbox's plant.created events, in the same transaction, read back only when
   * somebody subscribed. The created plants are the staged lines whose plant got
   * the version that line gave it; read in chunks, as the outbox writes between them.
   */
  private emitCreated(staging: Staging, base: bigint, now: number): void {
    const outbox = this.outbox.forBatch(now);
    if (!outbox.wants(PLANT_CREATED)) return;
    const chunk = this.db
      .prepare(
        `SELECT s.line, ${plantColumnsSql('s')} ${createdLines(staging)} WHERE s.line > ? ORDER BY s.line LIMIT 5000`,
      )
      .safeIntegers(true);
    let after = 0n;
    for (;;) {
      const rows = chunk.all(base, after) as (PlantValues & { readonly line: bigint })[];
      if (rows.length === 0) return;
      for (const row of rows) outbox.created(withoutAbsent(row));
      after = (rows.at(-1) as (typeof rows)[number]).line;
    }
  }
}
