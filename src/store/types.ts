/**
 * What the service needs from a store. SQLite and PostgreSQL implement it alike, checked by one contract test
 * suite. Ids are `bigint` throughout: no JS number ever holds one.
 */
import type { Scope } from '../domain/scopes.js';
import type { WebhookStore } from './webhook-types.js';
import type { ChangeLog } from './change-log-types.js';

export type * from './webhook-types.js';
export type * from './change-log-types.js';

import type { ExpectedVersion, PlantChange, PlantRecord, PlantValues, VersionedPlant } from '../domain/plant.js';

export type { ExpectedVersion, PlantChange, PlantRecord, PlantValues, VersionedPlant } from '../domain/plant.js';

export type CreatePlantOutcome =
  /** Newly stored. */
  | { readonly kind: 'created'; readonly plant: VersionedPlant }
  /** The id existed with the same content (samePlant): a safe retry, nothing written. */
  | { readonly kind: 'replayed'; readonly plant: VersionedPlant }
  /** The id existed with different content. */
  | { readonly kind: 'conflict'; readonly existing: VersionedPlant };

export type UpdatePlantOutcome =
  /** Changed, with a new version, and its plant.updated event written with it. */
  | { readonly kind: 'updated'; readonly plant: VersionedPlant }
  /** The change would change nothing: nothing written, the version kept. */
  | { readonly kind: 'unchanged'; readonly plant: VersionedPlant }
  | { readonly kind: 'not-found' }
  /** The plant's version is not one the request expected: nothing written. */
  | { readonly kind: 'precondition-failed'; readonly current: VersionedPlant };

export type DeletePlantOutcome =
  /** Deleted, and its plant.deleted event written with it. */
  | { readonly kind: 'deleted' }
  | { readonly kind: 'not-found' }
  | { readonly kind: 'precondition-failed'; readonly current: VersionedPlant };

/**
 * The orders GET /plants offers: by id, or by name (src/domain/search-text.ts says
 * what name order is), either way round; ties in name are ordered by id, so every
 * order is total and a keyset cursor names one place in it.
 */
export type PlantOrder = 'id' | '-id' | 'name' | '-name';

/** Which plants a list or count is about. */
export interface PlantFilter {
  /** Plants with any of these tags (exactly). */
  readonly tags?: readonly string[];
  /** Search terms (searchTerms in search-text.ts): each must start a word of a searched field of the plant. */
  readonly terms?: readonly string[];
}

export interface ListPlantsQuery extends PlantFilter {
  readonly limit: number;
  /** 'id' when left out. */
  readonly order?: PlantOrder;
  /** Keyset pagination: only plants after the one with this id, in the order. */
  readonly after?: bigint;
  /** In name orders, with `after`: that plant's name key (PlantPage.lastKey), its place in the order. */
  readonly afterKey?: string;
}

/**
 * One page of plants as the JSON array GET /plants answers with, built by the database: turning rows into JS
 * values and back into JSON cost more than the rest of the request.
 */
export interface PlantPage {
  readonly json: string;
  /** The last id on the page: the cursor for the next one. Undefined when empty. */
  readonly lastId: bigint | undefined;
  /** In name orders, the last plant's name key (the rest of the cursor). */
  readonly lastKey?: string;
  /** Whether plants after the last one exist (matching the filter). */
  readonly hasMore: boolean;
}

/** How many plants match a filter; `exact` false when it is the planner's estimate. */
export interface PlantCount {
  readonly count: number;
  readonly exact: boolean;
}

/** One plant of an import, with the line of the file it came from (for reports). */
export type ImportRow = PlantValues & { readonly line: number };

/**
 * How an import treats lines that conflict: 'all' stores nothing if any does (all
 * or nothing), 'skip' stores the others.
 */
export type ImportMode = 'all' | 'skip';

/** A staged line whose id is stored (or was created by an earlier line) with other content (not samePlant). */
export interface ImportConflict {
  readonly line: number;
  readonly id: bigint;
}

export type ImportOutcome =
  /** Committed: `created` new plants (each with its plant.created event); `unchanged` lines matched what was stored. */
  | {
      readonly kind: 'applied';
      readonly created: number;
      readonly unchanged: number;
      readonly conflicts: readonly ImportConflict[];
      readonly conflictCount: number;
    }
  /** Mode 'all' and some lines conflict: nothing was stored. */
  | { readonly kind: 'rejected'; readonly conflicts: readonly ImportConflict[]; readonly conflictCount: number };

/**
 * An import in progress: rows staged as they arrive, applied when the body has ended, in one transaction, so
 * nothing is visible before apply and an abandoned import (aborted, or the process died) leaves nothing.
 */
export interface PlantImport {
  stage(rows: readonly ImportRow[]): Promise<void>;
  /** Applies everything staged, atomically; reports at most `reportLimit` conflicts (the first, by line). */
  apply(mode: ImportMode, reportLimit: number): Promise<ImportOutcome>;
  /** Drops what was staged. Safe to call at any time, also after apply. */
  abort(): Promise<void>;
}

/** Plants as an export reads them, in id order. */
export type ExportChunk = readonly PlantRecord[];

export interface PlantStore {
  /** Atomic against concurrent creates of the same id (uses the primary key, not check-then-insert). */
  createPlant(plant: PlantRecord): Promise<CreatePlantOutcome>;
  getPlant(id: bigint): Promise<VersionedPlant | undefined>;
  /** A page of plants in the query's order, as the API's JSON, with whether more follow. */
  listPlantsPage(query: ListPlantsQuery): Promise<PlantPage>;
  /**
   * How many plants match. 'estimated' may answer from the database's statistics
   * (PostgreSQL, for large counts), saying so; SQLite always counts.
   */
  countPlants(filter: PlantFilter, how: 'exact' | 'estimated'): Promise<PlantCount>;
  /** The store's own random secret that signs page cursors (the same for every instance on the store). */
  pageCursorSecret(): Promise<string>;
  /**
   * Applies the change atomically, if the plant's version is one `expected` names
   * (the database decides, in the write itself: never check-then-write).
   */
  updatePlant(change: PlantChange, expected?: ExpectedVersion): Promise<UpdatePlantOutcome>;
  /** Deletes the plant, if its version is one `expected` names. */
  deletePlant(id: bigint, expected?: ExpectedVersion): Promise<DeletePlantOutcome>;
  beginImport(): Promise<PlantImport>;
  /**
   * Every plant matching the filter, in id order, in chunks, from ONE consistent
   * snapshot of the store (writes that commit meanwhile are not seen). Reads a chunk
   * only when the consumer asks for it; ending the iteration early releases the snapshot.
   */
  exportPlants(filter: PlantFilter): AsyncIterable<ExportChunk>;
}

export interface TokenRecord {
  readonly id: string;
  readonly name: string;
  readonly scopes: readonly Scope[];
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly lastUsedAt: Date | null;
  readonly revokedAt: Date | null;
  /** The id of the token that created it (POST /tokens); null for the first-start token and the CLI's. */
  readonly createdBy: string | null;
}

export interface NewTokenRecord {
  readonly id: string;
  readonly name: string;
  readonly secretHash: string;
  readonly scopes: readonly Scope[];
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly createdBy: string | null;
}

/**
 * What inserting a token did: nothing when its name is taken, or when the token creating it is revoked by then
 * (checked with the insert, atomically: a revocation either sees the new token and revokes it too, or comes first).
 */
export type InsertTokenOutcome = 'inserted' | 'name-taken' | 'creator-revoked';

export interface TokenRevocation {
  /** The token named, revoked (its first revocation's time is kept). */
  readonly token: TokenRecord;
  /** The ids of every token revoked with it: those it created, those they created, and so on. */
  readonly descendantIds: readonly string[];
}

export interface TokenStore {
  insertToken(token: NewTokenRecord): Promise<InsertTokenOutcome>;
  findTokenBySecretHash(secretHash: string): Promise<TokenRecord | undefined>;
  listTokens(): Promise<TokenRecord[]>;
  /** Revokes by id or name, with every token it created (directly or not); undefined when none matched. */
  revokeToken(idOrName: string, at: Date): Promise<TokenRevocation | undefined>;
  recordTokenUse(id: string, at: Date): Promise<void>;
  countTokens(): Promise<number>;
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  readonly plants: PlantStore;
  readonly tokens: TokenStore;
  /** Webhook subscriptions and the outbox of their deliveries (see src/webhooks/). */
  readonly webhooks: WebhookStore;
  /** Every change of a plant, by position, for the live stream (src/events/). */
  readonly changes: ChangeLog;
  /** Applies pending migrations; safe to call from several processes at once. */
  migrate(): Promise<void>;
  /** Resolves when the store can serve requests; rejects with StoreUnavailableError otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
