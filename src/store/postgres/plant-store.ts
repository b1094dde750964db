import type pg from 'pg';
import type { CreatePlantOutcome, ListPlantsQuery, PlantPage, PlantRecord, PlantStore } from '../types.js';
import { CreateBatcher, type CreateBatchDatabase, type CreateBatchStats } from './create-batcher.js';
import { guarded } from './errors.js';
import { pageStatement, toPage, type PageRow } from './plant-page.js';
import { ReadBatcher, type ReadBatchStats } from './read-batcher.js';
import { INSERT_PLANTS_UNLESS_SUBSCRIBED, INSERT_PLANTS_WITH_OUTBOX, insertPlantsOnlyValues, insertPlantsValues } from './webhook-store.js';

interface PlantRow {
  /** int8, parsed to bigint by the pool's type parser. */
  id: bigint;
  name: string;
  tag: string | null;
}

function toRecord(row: PlantRow): PlantRecord {
  return row.tag === null ? { id: row.id, name: row.name } : { id: row.id, name: row.name, tag: row.tag };
}

/** Ids are sent as decimal text, never as a JS number. */
const param = (id: bigint): string => id.toString();

// Named statements are prepared once per connection and reused. Creates go in
// batches (create-batcher.ts): INSERT_PLANTS_WITH_OUTBOX (webhook-store.ts) inserts a
// batch with ON CONFLICT DO NOTHING RETURNING id, plus the webhook events of the
// plants it created, in one statement (INSERT_PLANTS_UNLESS_SUBSCRIBED, the same
// without events, while nobody subscribes); SELECT_BY_IDS reads the ids that collided.
// Point reads go in batches too (read-batcher.ts), by the same SELECT_BY_IDS.
const SELECT_BY_IDS = { name: 'plants.by-ids', text: 'SELECT id, name, tag FROM plants WHERE id = ANY($1::int8[])' };
const DELETE_BY_ID = { name: 'plants.delete', text: 'DELETE FROM plants WHERE id = $1' };
const LIST_FIRST = { name: 'plants.list', text: 'SELECT id, name, tag FROM plants ORDER BY id LIMIT $1' };
const LIST_AFTER = { name: 'plants.list-after', text: 'SELECT id, name, tag FROM plants WHERE id > $1 ORDER BY id LIMIT $2' };
const LIST_TAG_FIRST = { name: 'plants.list-tag', text: 'SELECT id, name, tag FROM plants WHERE tag = $1 ORDER BY id LIMIT $2' };
const LIST_TAG_AFTER = {
  name: 'plants.list-tag-after',
  text: 'SELECT id, name, tag FROM plants WHERE tag = $1 AND id > $2 ORDER BY id LIMIT $3',
};

/** After a batch met a subscription, how long batches go with their events without trying first without. */
const SUBSCRIBER_SEEN_MS = 10_000;

export class PostgresPlantStore implements PlantStore {
  private readonly creates: CreateBatcher;
  private readonly reads: ReadBatcher;
  /** performance.now() until which batches go with their events straight away (see insertBatch). */
  private withEventsUntil = 0;

  /**
   * `batchesInFlight`: how many create batches may use a connection at once (see
   * batchesInFlightFor); `readBatchesInFlight`: the same for point reads (see
   * readBatchesInFlightFor).
   */
  constructor(
    private readonly pool: pg.Pool,
    batchesInFlight = 1,
    readBatchesInFlight = 1,
  ) {
    const database: CreateBatchDatabase = {
      insert: (plants) => guarded(() => this.insertBatch(plants)),
      find: (ids) => guarded(() => this.findByIds(ids)),
    };
    this.creates = new CreateBatcher(database, batchesInFlight);
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
    return this.creates.create(plant);
  }

  /** How creates have been grouped into statements since the store opened. */
  createBatchStats(): CreateBatchStats {
    return this.creates.stats();
  }

  /** Refuses new creates and waits for the accepted ones to settle (before the pool closes). */
  async closeCreates(): Promise<void> {
    await this.creates.close();
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
   * With no subscriber, a batch goes out without its webhook events: building one per
   * plant (a random id and a JSON text) and sending them as three more arrays cost a
   * measurable share of a create's CPU (bench/README.md, "Figures behind code
   * comments"), for rows the statement then drops;
   * when the statement finds a subscription it inserts nothing and the batch goes again
   * with its events. After seeing a subscriber, batches go with their events straight
   * away for a while. That choice is only about speed: either statement decides for
   * itself, in its own snapshot, whether events are written.
   */
  private async insertBatch(plants: readonly PlantRecord[]): Promise<ReadonlySet<bigint>> {
    if (performance.now() >= this.withEventsUntil) {
      const { rows } = await this.pool.query<{ subscribed: boolean; id: bigint | null }>({
        ...INSERT_PLANTS_UNLESS_SUBSCRIBED,
        values: insertPlantsOnlyValues(plants),
      });
      if (rows[0]?.subscribed === false) return new Set(rows.flatMap((row) => (row.id === null ? [] : [row.id])));
      this.withEventsUntil = performance.now() + SUBSCRIBER_SEEN_MS;
    }
    const { rows } = await this.pool.query<{ id: bigint }>({ ...INSERT_PLANTS_WITH_OUTBOX, values: insertPlantsValues(plants) });
    return new Set(rows.map((row) => row.id));
  }

  private async findByIds(ids: readonly bigint[]): Promise<ReadonlyMap<bigint, PlantRecord>> {
    const { rows } = await this.pool.query<PlantRow>({ ...SELECT_BY_IDS, values: [ids.map(param)] });
    return new Map(rows.map((row) => [row.id, toRecord(row)]));
  }

  /**
   * Rides in a batch with the other reads that arrived in the same turn of the event
   * loop: one statement for all of them. The batch's statement starts after this
   * read was requested, so it sees every write committed before (read-batcher.ts).
   */
  async getPlant(id: bigint): Promise<PlantRecord | undefined> {
    return this.reads.get(id);
  }

  async listPlants({ limit, after, tag }: ListPlantsQuery): Promise<PlantRecord[]> {
    const statement =
      tag === undefined
        ? after === undefined
          ? { ...LIST_FIRST, values: [limit] }
          : { ...LIST_AFTER, values: [param(after), limit] }
        : after === undefined
          ? { ...LIST_TAG_FIRST, values: [tag, limit] }
          : { ...LIST_TAG_AFTER, values: [tag, param(after), limit] };
    const rows = await guarded(async () => (await this.pool.query<PlantRow>(statement)).rows);
    return rows.map(toRecord);
  }

  async listPlantsPage(query: ListPlantsQuery): Promise<PlantPage> {
    const rows = await guarded(async () => (await this.pool.query<PageRow>(pageStatement(query))).rows);
    return toPage(rows[0] as PageRow);
  }


  async deletePlant(id: bigint): Promise<boolean> {
    return guarded(async () => (await this.pool.query({ ...DELETE_BY_ID, values: [param(id)] })).rowCount === 1);
  }
}
