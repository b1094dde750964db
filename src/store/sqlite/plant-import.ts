/**
 * Imports on SQLite, in the writer thread. Rows are staged in a TEMP table of the writer's connection (outside
 * the store's file: no write lock, no fsync, nothing left if the process dies); apply moves them into `plants`
 * in ONE transaction with create's rules: the first line of an id wins, a later identical line is unchanged,
 * a different one a conflict.
 *
 * Rows go in by id so the table and indexes grow at one end (bench/README.md, "Import and export"); lines
 * already in id order are read unsorted. The search index and change log get theirs in one statement each.
 */
import type Database from 'better-sqlite3';
import { PLANT_CREATED } from '../../domain/events.js';
import { FIND_ROW_COLUMNS, findRow } from '../../domain/search-text.js';
import { PLANT_KEYS, withoutAbsent, type PlantValues } from '../../domain/plant.js';
import { plantColumnDefinitionsSql, plantColumnsSql, plantsDifferSql } from '../../domain/plant-sql.js';
import { findColumnDefinitionsSql, findColumnsSql, wordsColumnsSql } from '../../domain/plant-find-sql.js';
import type { ImportConflict, ImportMode, ImportOutcome, ImportRow } from '../types.js';
import { APPEND_CHANGES } from './change-log-writes.js';
import { SqliteWebhookOutbox } from './webhook-store.js';

const TEMP_CACHE_KIB = 2048;
/**
 * The writer's page cache while an import is applied: each of its two sorts by id holds as much as the cache
 * may before spilling, so a small cache keeps the writer's peak memory down at no measurable cost in time
 * (bench/README.md, "Import and export memory").
 */
const APPLY_CACHE_KIB = 2048;

/** The staged columns, in the temp table's order: line is the rowid (lines arrive in order, so staging appends). */
const STAGED_COLUMNS = ['line', ...PLANT_KEYS, ...FIND_ROW_COLUMNS] as const;
const STAGED_DEFINITIONS = `line INTEGER PRIMARY KEY, ${plantColumnDefinitionsSql('sqlite')}, ${findColumnDefinitionsSql('sqlite')}`;

/** Appends a line's values to `pending`, in the temp table's order. */
function pushStaged(pending: unknown[], row: ImportRow): void {
  const staged: Record<(typeof STAGED_COLUMNS)[number], unknown> = { ...row, ...findRow(row) };
  for (const column of STAGED_COLUMNS) pending.push(staged[column]);
}

/** Staged rows per INSERT: a statement run's set-up is a large share of one row's cost (bench/README.md). */
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
    // Staging only appends and apply reads once in order, so a small temp cache costs nothing and saves memory.
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
   * Applies the import in one transaction. Its commit does not checkpoint (durability needs only the WAL's
   * fsync, and the checkpoint outlasted the commit): the writer checkpoints once the answer is on its way.
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
        `INSERT INTO plants (${plantColumnsSql()}, created_at, version, ${findColumnsSql()})
        SELECT ${plantColumnsSql()}, ?, ? + line, ${findColumnsSql()}
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
    const into = `INSERT INTO plants_search (rowid, ${wordsColumnsSql()})`;
    if (created === staging.rows) {
      this.db
        .prepare(`${into} SELECT id, ${wordsColumnsSql()} FROM ${staging.table} ORDER BY ${idOrder(staging)}`)
        .run();
    } else {
      this.db.prepare(`${into} SELECT s.id, ${wordsColumnsSql('s')} ${createdLines(staging)} ORDER BY s.id`).run(base);
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

  /** Lines whose id now holds other content (not samePlant): stored before, or created by an earlier line. */
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
