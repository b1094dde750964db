import type pg from 'pg';
import { nameKey, SEARCHED_FIELDS, searchWords, type WordsColumn } from '../../domain/search-text.js';
import { newEventId, newEventIds, PLANT_DELETED, PLANT_UPDATED } from '../../domain/events.js';
import { deletedPlantJsonSql } from '../../domain/plant-json.js';
import { PLANT_POSTGRES_TYPES, plantColumnsSql, plantContentColumnsSql } from '../../domain/plant-sql.js';
import {
  PLANT_CONTENT_KEYS,
  withoutAbsent,
  type PlantContent,
  type PlantContentKey,
  type PlantValues,
} from '../../domain/plant.js';
import type {
  ExportChunk,
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
import { createBatcher, type CreateBatchDatabase } from './create-batcher.js';
import type { BatchCounts } from '../core/batcher.js';
import type { KeyedBatcher } from './keyed-batcher.js';
import { guarded } from './errors.js';
import { ArrayInput } from './array-input.js';
import { BulkSlots } from '../core/bulk-slots.js';
import { exportPostgresPlants } from './plant-export.js';
import { PostgresPlantImport } from './plant-import.js';
import { countStatement, estimateStatement, pageStatement, plannedRows, toPage, type PageRow } from './plant-page.js';
import { ReadBatcher, type ReadBatchStats } from './read-batcher.js';
import { updateBatcher, type ChangeResult, type PendingChange } from './update-batcher.js';
import {
  deliveriesOfEvent,
  INSERT_PLANTS_UNLESS_SUBSCRIBED,
  INSERT_PLANTS_WITH_OUTBOX,
  insertPlantsOnlyValues,
  insertPlantsValues,
  PLANT_JSON_SQL,
} from './webhook-store.js';

/** ids and versions: int8, parsed to bigint by the pool's type parser. */
type VersionedRow = PlantValues & { readonly version: bigint };

/**
 * A row of an UPDATE_PLANTS statement: a change applied (the plant after it), or not (the plant as seen, if any;
 * the content columns and the version are NULL when there is none).
 */
type ChangeRow = {
  readonly change_id: bigint;
  readonly applied: boolean;
  readonly seen: boolean;
  readonly version: bigint | null;
} & { readonly [K in PlantContentKey]: PlantContent[K] | null };

function changeResult(row: ChangeRow): ChangeResult {
  const { change_id: id, applied, seen, version, ...content } = row;
  if (!applied && !seen) return { applied: false, seen: undefined };
  // A row applied or seen has its plant's columns as stored.
  const plant = toVersioned({ id, ...(content as PlantContent), version: version as bigint });
  return applied ? { applied: true, plant } : { applied: false, seen: plant };
}

function toVersioned(row: VersionedRow): VersionedPlant {
  const { version, ...plant } = row;
  return { ...withoutAbsent(plant), version };
}

/** An If-Match's versions as a parameter: null when any existing plant will do. */
function expectedParam(expected: ExpectedVersion | undefined): string[] | null {
  return expected === undefined || expected === 'any' ? null : expected.map(String);
}

/**
 * Where a subscriber to `type` exists, the events of the rows of `changed` (with columns
 * `payload`, `tag` and `previous_tag`, which the subscriptions' tag filters compare) and
 * their deliveries. `eventId`: the event's id, a parameter or a column of `changed`.
 */
function outboxOf(type: typeof PLANT_UPDATED | typeof PLANT_DELETED, eventId: string, now: string): string {
  return `event AS (
      INSERT INTO webhook_events (id, type, payload, created_at, tag, previous_tag)
      SELECT ${eventId}, '${type}', payload, ${now}::timestamptz, tag, previous_tag FROM changed
      WHERE EXISTS (SELECT 1 FROM webhook_subscriptions WHERE '${type}' = ANY(event_types))
      RETURNING id, tag, previous_tag
    ), ${deliveriesOfEvent(type, now)}`;
}

/**
 * The tags a batch's changes of the tag replace, for the subscriptions filtering plant.updated by tag. RETURNING
 * sees only the new row, and the snapshot may be older than the row a concurrent change left, so the rows are
 * locked first (every row of the batch, in id order like the UPDATE, so batches cannot deadlock) and read as
 * locked. Only when such a subscription exists and the batch changes a tag: other updates lock nothing more.
 */
const PREVIOUS_TAGS = `previous AS MATERIALIZED (
      SELECT p.id AS previous_id, p.tag AS previous_tag FROM plants p
      WHERE p.id IN (SELECT change_id FROM input)
        AND EXISTS (SELECT 1 FROM input WHERE patch ? 'tag')
        AND EXISTS (SELECT 1 FROM webhook_subscriptions WHERE tag IS NOT NULL AND '${PLANT_UPDATED}' = ANY(event_types))
      ORDER BY p.id FOR NO KEY UPDATE
    )`;

/**
 * A change of a batch: its fields as a JSON Merge Patch (a field left out is kept, null removes it), so the
 * statement sets each of the definition's fields alike; the new find columns likewise kept when NULL.
 */
type ChangeInput = {
  readonly change_id: string;
  readonly patch: string;
  /** The expected versions as an int8[] literal; NULL: any. */
  readonly expected: string | null;
  readonly event_id: string;
  readonly new_name_key: string | null;
} & NewWords;

/** Each searched field's new words (`new_name_words`, ...): NULL when the change leaves the field as it is. */
type NewWords = { readonly [C in WordsColumn as `new_${C}`]: string | null };

const NEW_WORDS = SEARCHED_FIELDS.map(({ key, column }) => ({ key, column, input: `new_${column}` as keyof NewWords }));

const CHANGES_INPUT = new ArrayInput<ChangeInput>({
  change_id: 'int8',
  patch: 'jsonb',
  expected: 'text',
  event_id: 'text',
  new_name_key: 'text',
  ...(Object.fromEntries(NEW_WORDS.map(({ input }) => [input, 'text'])) as { readonly [K in keyof NewWords]: string }),
});

/** `name_words = CASE WHEN patch ? 'name' THEN new_name_words ELSE name_words END, ...`: a field's words follow it. */
const SET_WORDS = NEW_WORDS.map(
  ({ key, column, input }) => `${column} = CASE WHEN patch ? '${key}' THEN ${input} ELSE ${column} END`,
).join(',\n        ');

/** The new words of `change`'s fields, NULL for those it leaves out. */
function newWordsOf(change: PlantChange): NewWords {
  const words: Partial<Record<keyof NewWords, string | null>> = {};
  for (const { key, input } of NEW_WORDS) words[input] = change[key] === undefined ? null : searchWords(change[key]);
  return words as NewWords;
}

/** A plant column as the change's patch leaves it: the patch's value if it has the key (null too), else kept. */
function patched(key: PlantContentKey): string {
  return `CASE WHEN patch ? '${key}' THEN (patch ->> '${key}')::${PLANT_POSTGRES_TYPES[key]} ELSE ${key} END`;
}

/** The change's patch: its content fields, one left undefined (kept) not in it. */
function patchOf(change: PlantChange): string {
  return JSON.stringify(Object.fromEntries(PLANT_CONTENT_KEYS.map((key) => [key, change[key]])));
}

/** For a change not applied: the content as applied, else as seen. */
const answeredContent = PLANT_CONTENT_KEYS.map(
  (key) => `CASE WHEN changed.id IS NULL THEN seen.${key} ELSE changed.${key} END AS ${key}`,
).join(', ');

/**
 * A batch of changes as one statement (update-batcher.ts). The WHERE holds each change's precondition, so the
 * row decides: PostgreSQL re-checks it after a concurrent commit, so of writers expecting one version exactly
 * one matches. `reporting` adds, for each change not applied, the plant as the snapshot saw it (the outer
 * SELECT reads the table before the UPDATE), which says why. Input sorted by id is updated in that order, so
 * instances lock overlapping ids in one order. Its values: updatePlantsValues.
 */
function updatePlantsStatement(reporting: boolean): { name: string; text: string } {
  const answer = reporting
    ? `SELECT change_id, changed.id IS NOT NULL AS applied,
      ${answeredContent}, coalesce(changed.version, seen.version) AS version, seen.id IS NOT NULL AS seen
    FROM input LEFT JOIN changed ON changed.id = change_id LEFT JOIN plants seen ON seen.id = change_id`
    : `SELECT id AS change_id, true AS applied, ${plantContentColumnsSql()}, version, true AS seen FROM changed`;
  return {
    name: reporting ? 'plants.update-batch-reporting' : 'plants.update-batch',
    text: `
    WITH input AS (
      SELECT * FROM ${CHANGES_INPUT.unnest('i')}
    ), ${PREVIOUS_TAGS}, changed AS (
      UPDATE plants SET ${PLANT_CONTENT_KEYS.map((key) => `${key} = ${patched(key)}`).join(', ')},
        version = nextval('plant_versions'),
        name_key = coalesce(new_name_key, name_key),
        ${SET_WORDS}
      FROM input LEFT JOIN previous ON previous_id = change_id
      WHERE id = change_id AND (expected IS NULL OR version = ANY(expected::int8[]))
        AND (${plantContentColumnsSql()}) IS DISTINCT FROM (${PLANT_CONTENT_KEYS.map(patched).join(', ')})
      RETURNING ${plantColumnsSql()}, version, event_id, ${PLANT_JSON_SQL} AS payload,
        -- A change leaving the tag as it was: the tag it has (NULL where no filter needs it).
        CASE WHEN patch ? 'tag' THEN previous_tag ELSE tag END AS previous_tag
    ), ${outboxOf(PLANT_UPDATED, 'event_id', CHANGES_INPUT.parameter())}
    ${answer}`,
  };
}

const UPDATE_PLANTS = updatePlantsStatement(false);
const UPDATE_PLANTS_REPORTING = updatePlantsStatement(true);

/** The values of UPDATE_PLANTS: the changes, and the time. */
function updatePlantsValues(changes: readonly PendingChange[], now = new Date()): unknown[] {
  const eventIds = newEventIds(changes.length);
  const rows = changes.map(({ change, expected }, i): ChangeInput => {
    const versions = expectedParam(expected);
    return {
      change_id: param(change.id),
      patch: patchOf(change),
      // One int8[] literal per change: unnest takes no arrays of arrays.
      expected: versions === null ? null : `{${versions.join(',')}}`,
      event_id: eventIds[i] ?? newEventId(),
      new_name_key: change.name === undefined ? null : nameKey(change.name),
      ...newWordsOf(change),
    };
  });
  return [...CHANGES_INPUT.values(rows), now];
}

/** A delete as one statement, its precondition in its WHERE, its event with it. Its values: deleteValues. */
const DELETE_PLANT = {
  name: 'plants.delete',
  text: `
    WITH changed AS (
      DELETE FROM plants WHERE id = $1 AND ($2::int8[] IS NULL OR version = ANY($2::int8[]))
      RETURNING id, ${deletedPlantJsonSql()} AS payload, tag, NULL::text AS previous_tag
    ), ${outboxOf(PLANT_DELETED, '$3', '$4')}
    SELECT count(*)::int AS deleted FROM changed`,
};

/** DELETE_PLANT's $1 to $4. */
function deleteValues(id: bigint, expected: ExpectedVersion | undefined, eventId: string, now: Date): unknown[] {
  return [param(id), expectedParam(expected), eventId, now];
}

/** Ids are sent as decimal text, never as a JS number. */
const param = (id: bigint): string => id.toString();

// Named statements are prepared once per connection. SELECT_BY_IDS reads the ids a create batch collided
// with (create-batcher.ts), and batched point reads (read-batcher.ts).
const SELECT_BY_IDS = {
  name: 'plants.by-ids',
  text: `SELECT ${plantColumnsSql()}, version FROM plants WHERE id = ANY($1::int8[])`,
};

/** A count=estimated whose estimate is below this is counted exactly (documented in the list's OpenAPI description). */
export const COUNT_EXACTLY_BELOW = 10_000;

/** After a batch met a subscription, how long batches go with their events without trying first without. */
const SUBSCRIBER_SEEN_MS = 10_000;

export class PostgresPlantStore implements PlantStore {
  private readonly creates: KeyedBatcher<PlantRecord, CreatePlantOutcome>;
  private readonly updates: KeyedBatcher<PendingChange, UpdatePlantOutcome>;
  private readonly reads: ReadBatcher;
  /** performance.now() until which batches go with their events straight away (see insertBatch). */
  private withEventsUntil = 0;

  /** Connections create and change batches may each use at once, and point-read batches (batchesInFlightFor). */
  constructor(
    private readonly pool: pg.Pool,
    batchesInFlight = 1,
    readBatchesInFlight = 1,
    /** Imports and exports at once (bulk-slots.ts). */
    private readonly bulk = new BulkSlots(1),
    /** Where batches of several creates go: a pool whose statements wait for a held row only briefly (see insertBatch).
     * */
    private readonly createBatchPool: pg.Pool = pool,
  ) {
    const database: CreateBatchDatabase = {
      insert: (plants) => guarded(() => this.insertBatch(plants)),
      find: (ids) => guarded(() => this.findByIds(ids)),
    };
    this.creates = createBatcher(database, batchesInFlight);
    this.updates = updateBatcher(
      { update: (changes, reporting) => guarded(() => this.updateBatch(changes, reporting)) },
      batchesInFlight,
    );
    this.reads = new ReadBatcher({ find: (ids) => guarded(() => this.findByIds(ids)) }, readBatchesInFlight);
  }

  /**
   * The primary key decides who wins: INSERT .. ON CONFLICT DO NOTHING commits a new
   * row or changes nothing (it waits for a concurrent insert of the same id to commit
   * or roll back, so it never misses one). On a conflict the stored row is read and
   * compared. The create rides in a batch with others that arrived meanwhile, and
   * resolves once that batch's statement committed.
   */
  async createPlant(plant: PlantRecord): Promise<CreatePlantOutcome> {
    return this.creates.write(plant.id, plant);
  }

  /** How creates have been grouped into statements since the store opened. */
  createBatchStats(): BatchCounts {
    return this.creates.stats();
  }

  /** How changes have been grouped into statements since the store opened. */
  updateBatchStats(): BatchCounts {
    return this.updates.stats();
  }

  /** Refuses new creates and changes, and waits for the accepted ones to settle (before the pool closes). */
  async closeWrites(): Promise<void> {
    await Promise.all([this.creates.close(), this.updates.close()]);
  }

  /** How point reads have been grouped into statements since the store opened. */
  readBatchStats(): ReadBatchStats {
    return this.reads.stats();
  }

  /** Refuses new reads and waits for the accepted ones to settle (before the pool closes). */
  async closeReads(): Promise<void> {
    await this.reads.close();
  }

  /**
   * With no subscriber seen lately, a batch goes without its webhook events, which cost a measurable share of a
   * create's CPU; if the statement finds a subscription it inserts nothing and the batch goes again with them.
   * Only a speed choice: either statement decides in its own snapshot whether events are written.
   */
  private async insertBatch(plants: readonly PlantRecord[]): Promise<ReadonlyMap<bigint, bigint>> {
    // A batch meeting an id another transaction is inserting (an import, another instance's batch) gives up after
    // a short wait (55P03) and goes again one create per statement (keyed-batcher.ts): only that id's create waits.
    const pool = plants.length > 1 ? this.createBatchPool : this.pool;
    if (performance.now() >= this.withEventsUntil) {
      const { rows } = await pool.query<{ subscribed: boolean; id: bigint | null; version: bigint | null }>({
        ...INSERT_PLANTS_UNLESS_SUBSCRIBED,
        values: insertPlantsOnlyValues(plants),
      });
      if (rows[0]?.subscribed === false)
        return new Map(
          rows.flatMap((row) => (row.id === null || row.version === null ? [] : [[row.id, row.version] as const])),
        );
      this.withEventsUntil = performance.now() + SUBSCRIBER_SEEN_MS;
    }
    const { rows } = await pool.query<{ id: bigint; version: bigint }>({
      ...INSERT_PLANTS_WITH_OUTBOX,
      values: insertPlantsValues(plants),
    });
    return new Map(rows.map((row) => [row.id, row.version]));
  }

  private async updateBatch(
    changes: readonly PendingChange[],
    reporting: boolean,
  ): Promise<ReadonlyMap<bigint, ChangeResult>> {
    const statement = reporting ? UPDATE_PLANTS_REPORTING : UPDATE_PLANTS;
    const { rows } = await this.pool.query<ChangeRow>({ ...statement, values: updatePlantsValues(changes) });
    return new Map(rows.map((row) => [row.change_id, changeResult(row)]));
  }

  private async findByIds(ids: readonly bigint[]): Promise<ReadonlyMap<bigint, VersionedPlant>> {
    const { rows } = await this.pool.query<VersionedRow>({ ...SELECT_BY_IDS, values: [ids.map(param)] });
    return new Map(rows.map((row) => [row.id, toVersioned(row)]));
  }

  /** The plant as it is now, read after a write that did not happen, to say why. */
  private async current(id: bigint): Promise<VersionedPlant | undefined> {
    return (await guarded(() => this.findByIds([id]))).get(id);
  }

  /** Rides in a batch with the other changes that arrived meanwhile, and resolves once its statement committed. */
  async updatePlant(change: PlantChange, expected?: ExpectedVersion): Promise<UpdatePlantOutcome> {
    return this.updates.write(change.id, { change, expected });
  }

  /** Batched with the reads of the same event-loop turn; the statement starts after the request, so sees its writes. */
  async getPlant(id: bigint): Promise<VersionedPlant | undefined> {
    return this.reads.get(id);
  }

  async listPlantsPage(query: ListPlantsQuery): Promise<PlantPage> {
    const rows = await guarded(async () => (await this.pool.query<PageRow>(pageStatement(query))).rows);
    return toPage(rows[0] as PageRow);
  }

  /** 'estimated' asks the planner (EXPLAIN) and answers a large estimate as PostgREST does; a small one is counted. */
  async countPlants(filter: PlantFilter, how: 'exact' | 'estimated'): Promise<PlantCount> {
    if (how === 'estimated') {
      const { rows } = await guarded(() => this.pool.query<[unknown]>(estimateStatement(filter)));
      const estimate = plannedRows(rows[0]?.[0]);
      if (estimate >= COUNT_EXACTLY_BELOW) return { count: Math.round(estimate), exact: false };
    }
    const { rows } = await guarded(() => this.pool.query<[string]>(countStatement(filter)));
    return { count: Number(rows[0]?.[0]), exact: true };
  }

  async pageCursorSecret(): Promise<string> {
    const { rows } = await guarded(() =>
      this.pool.query<{ secret: string }>("SELECT secret FROM store_secrets WHERE name = 'page-cursor'"),
    );
    if (rows[0] === undefined) throw new Error('the store has no page-cursor secret (migration 7)');
    return rows[0].secret;
  }

  async deletePlant(id: bigint, expected?: ExpectedVersion): Promise<DeletePlantOutcome> {
    const values = deleteValues(id, expected, newEventId(), new Date());
    const { rows } = await guarded(() => this.pool.query<{ deleted: number }>({ ...DELETE_PLANT, values }));
    if (rows[0]?.deleted === 1) return { kind: 'deleted' };
    const current = expected === undefined ? undefined : await this.current(id);
    return current === undefined ? { kind: 'not-found' } : { kind: 'precondition-failed', current };
  }

  async beginImport(): Promise<PlantImport> {
    const release = this.bulk.take();
    try {
      return await PostgresPlantImport.begin(this.pool, release);
    } catch (error) {
      release();
      throw error;
    }
  }

  async *exportPlants(filter: PlantFilter): AsyncGenerator<ExportChunk> {
    const release = this.bulk.take();
    try {
      yield* exportPostgresPlants(this.pool, filter);
    } finally {
      release();
    }
  }
}
