/**
 * Plants on SQLite: pages, counts and exports run in reader threads so they never block the event loop; the
 * point read by id stays on the main thread (cheaper than a trip to another thread). Writes go through group
 * commit to the writer thread, so no fsync blocks the event loop.
 */
import type Database from 'better-sqlite3';
import type {
  ExportChunk,
  ImportMode,
  ImportOutcome,
  ImportRow,
  PlantImport,
  CreatePlantOutcome,
  DeletePlantOutcome,
  ExpectedVersion,
  ListPlantsQuery,
  PlantChange,
  PlantCount,
  PlantFilter,
  PlantPage,
  PlantRecord,
  PlantStore,
  UpdatePlantOutcome,
  VersionedPlant,
} from '../types.js';
import { valuesOf, withoutAbsent } from '../../domain/plant.js';
import { plantContentColumnsSql } from '../../domain/plant-sql.js';
import { BulkSlots } from '../core/bulk-slots.js';
import { guarded } from './errors.js';
import type { StoreWriter } from './store-writer.js';
import type { SqliteHealth } from './health.js';
import type { ReaderPool } from './reader-pool.js';
import type { ChangeSignal } from './change-log.js';
import type { PlantState, PlantWriteResult } from './writer-protocol.js';

/**
 * Imports and exports at once (bulk-slots.ts): an export holds a connection and a read snapshot in a
 * reader thread, an import a temp table in the writer; four bound what slow clients can hold.
 */
const BULK_AT_ONCE = 4;

function versioned(id: bigint, state: PlantState): VersionedPlant {
  return { ...withoutAbsent({ id, ...state }), version: state.version };
}

function unexpected(result: PlantWriteResult, what: string): Error {
  return new Error(`unexpected result '${result.kind}' for ${what}`);
}

export class SqlitePlantStore implements PlantStore {
  private readonly selectById: Database.Statement;

  constructor(
    db: Database.Database,
    private readonly writer: StoreWriter,
    private readonly readers: ReaderPool,
    private readonly health: SqliteHealth,
    /** Fired after every write that reached the store: the change log may have grown. */
    private readonly changed: ChangeSignal,
    private readonly bulk = new BulkSlots(BULK_AT_ONCE),
  ) {
    // safeIntegers: ids and versions come back as bigint, never rounded through a double.
    this.selectById = db
      .prepare(`SELECT ${plantContentColumnsSql()}, version FROM plants WHERE id = ?`)
      .safeIntegers(true);
  }

  async createPlant(plant: PlantRecord): Promise<CreatePlantOutcome> {
    const result = await this.written(this.writer.write({ op: 'create', ...valuesOf(plant) }));
    switch (result.kind) {
      case 'created':
        return { kind: 'created', plant: { ...plant, version: result.version } };
      case 'replayed':
        return { kind: 'replayed', plant: versioned(plant.id, result.state) };
      case 'conflict':
        return { kind: 'conflict', existing: versioned(plant.id, result.state) };
      default:
        throw unexpected(result, 'a create');
    }
  }

  async getPlant(id: bigint): Promise<VersionedPlant | undefined> {
    const row = this.health.reading(() => guarded(() => this.selectById.get(id))) as PlantState | undefined;
    return row === undefined ? undefined : versioned(id, row);
  }

  async updatePlant(change: PlantChange, expected?: ExpectedVersion): Promise<UpdatePlantOutcome> {
    const result = await this.written(this.writer.write({ op: 'update', ...change, expected }));
    switch (result.kind) {
      case 'updated':
      case 'unchanged':
        return { kind: result.kind, plant: versioned(change.id, result.state) };
      case 'not-found':
        return result;
      case 'precondition-failed':
        return { kind: 'precondition-failed', current: versioned(change.id, result.state) };
      default:
        throw unexpected(result, 'an update');
    }
  }

  async listPlantsPage(query: ListPlantsQuery): Promise<PlantPage> {
    return this.readers.call('plants', 'page', [query]);
  }

  async countPlants(filter: PlantFilter): Promise<PlantCount> {
    return this.readers.call('plants', 'count', [filter]);
  }

  async pageCursorSecret(): Promise<string> {
    return this.readers.call('plants', 'pageCursorSecret', []);
  }

  async deletePlant(id: bigint, expected?: ExpectedVersion): Promise<DeletePlantOutcome> {
    const result = await this.written(this.writer.write({ op: 'delete', id, expected }));
    switch (result.kind) {
      case 'deleted':
      case 'not-found':
        return result;
      case 'precondition-failed':
        return { kind: 'precondition-failed', current: versioned(id, result.state) };
      default:
        throw unexpected(result, 'a delete');
    }
  }

  /** The write's result, once the change signal has been fired for it (a change, or none: listeners read the log to
   * know). */
  private async written<T>(write: Promise<T>): Promise<T> {
    const result = await write;
    this.changed.fire();
    return result;
  }

  /** Staging and applying run in the writer thread (plant-import.ts); this side only forwards. */
  async beginImport(): Promise<PlantImport> {
    const release = this.bulk.take();
    const writer = this.writer;
    let id: number;
    try {
      id = await writer.call('imports', 'begin', []);
    } catch (error) {
      release();
      throw error;
    }
    let applied = false;
    return {
      stage: (rows: readonly ImportRow[]) => writer.call('imports', 'stage', [id, rows]),
      // Applying ends the import in the writer (applied or not), as aborting does: either frees its slot.
      apply: (mode: ImportMode, reportLimit: number): Promise<ImportOutcome> => {
        applied = true;
        return this.written(writer.call('imports', 'apply', [id, mode, reportLimit])).finally(release);
      },
      // After an apply there is nothing left to end: no call, which would wait behind the
      // upkeep the writer does after an import (writer-connection.ts).
      abort: async () => {
        if (!applied) await writer.call('imports', 'abort', [id]).finally(release);
      },
    };
  }

  async *exportPlants(filter: PlantFilter): AsyncGenerator<ExportChunk> {
    const release = this.bulk.take();
    try {
      const reader = this.readers.pin();
      const id = await reader.call('exports', 'begin', [filter]);
      try {
        for (;;) {
          const chunk = await reader.call('exports', 'next', [id]);
          if (chunk.length === 0) return;
          yield chunk;
        }
      } finally {
        // A no-op once the export has read its last chunk; otherwise its client went away.
        await reader.call('exports', 'end', [id]).catch(() => undefined);
      }
    } finally {
      release();
    }
  }
}
