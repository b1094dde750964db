/**
 * What the main thread and the writer thread say to each other: plain data, crossing by structured clone.
 * Plant writes are batched, one transaction each; the rare token and webhook writes go one by one as
 * DelegatedWrites. The writer thread is the only writer, so the main thread never waits for a batch's lock.
 */
import type { PlantContent } from '../../domain/plant.js';
import type { ExpectedVersion, PlantChange, PlantValues, TokenStore, WebhookStore } from '../types.js';
import type { SqliteChangeLogPruner } from './change-log.js';
import type { SqlitePlantImports } from './plant-import.js';

/** The plant's fields travel as the definition has them (PlantValues, PlantChange): a new field needs no change. */
export type PlantWrite =
  | ({ readonly op: 'create' } & PlantValues)
  /** A merge (PlantChange): a field left undefined is kept; an optional one null is removed. */
  | ({ readonly op: 'update'; readonly expected?: ExpectedVersion } & PlantChange)
  | { readonly op: 'delete'; readonly id: bigint; readonly expected?: ExpectedVersion };

/** A plant's row as it stands (after the write, or blocking it). */
export type PlantState = PlantContent & { readonly version: bigint };

export type PlantWriteResult =
  | { readonly kind: 'created'; readonly version: bigint }
  /** The id existed with the same content. */
  | { readonly kind: 'replayed'; readonly state: PlantState }
  /** The id existed with different content: this is what is stored. */
  | { readonly kind: 'conflict'; readonly state: PlantState }
  | { readonly kind: 'updated'; readonly state: PlantState }
  | { readonly kind: 'unchanged'; readonly state: PlantState }
  | { readonly kind: 'deleted' }
  | { readonly kind: 'not-found' }
  /** The stored version is not one the write expected: nothing was written. */
  | { readonly kind: 'precondition-failed'; readonly state: PlantState };

/**
 * The token and webhook writes the writer thread runs, by store: declared here and
 * nowhere else. The main thread's call() and the writer thread's dispatch are both
 * typed from it, so a method, its arguments and its result are checked at both ends.
 */
export interface DelegatedWrites {
  readonly maintenance: StoreMaintenance;
  /** Imports: staged chunk by chunk, then applied in one transaction (plant-import.ts). */
  readonly imports: Pick<SqlitePlantImports, 'begin' | 'stage' | 'apply' | 'abort'>;
  /** Retention of the change log (change-log.ts). */
  readonly changes: Pick<SqliteChangeLogPruner, 'prune'>;
  readonly tokens: Pick<TokenStore, 'insertToken' | 'revokeToken' | 'recordTokenUse'>;
  readonly webhooks: Pick<
    WebhookStore,
    | 'insertSubscription'
    | 'rotateSecret'
    | 'updateSubscription'
    | 'disableFailingSubscription'
    | 'startRecovery'
    | 'recoverBatch'
    | 'deleteSubscription'
    | 'claimDueDeliveries'
    | 'recordAttempt'
    | 'retryDelivery'
    | 'pruneFinishedEvents'
  >;
}

/** What the writer thread checks for the store's health (health.ts). */
export interface StoreMaintenance {
  /** PRAGMA quick_check's first findings: ['ok'] for a sound file. */
  quickCheck(): string[];
  /** A durable write that changes nothing: whether the store can write now. */
  probeWrite(): void;
}

export type DelegatedStore = keyof DelegatedWrites;
export type DelegatedMethod<S extends DelegatedStore> = keyof DelegatedWrites[S];

/** The same writes as plain functions of their arguments: what the writer thread's table provides. */
export type WriteHandlers = {
  readonly [S in DelegatedStore]: {
    readonly [M in DelegatedMethod<S>]: DelegatedWrites[S][M] extends (...args: infer A) => infer R
      ? (...args: A) => R
      : never;
  };
};

export type WriteArgs<S extends DelegatedStore, M extends DelegatedMethod<S>> = Parameters<WriteHandlers[S][M]>;
export type WriteResult<S extends DelegatedStore, M extends DelegatedMethod<S>> = Awaited<
  ReturnType<WriteHandlers[S][M]>
>;

/** One delegated write: `store.method(...args)`. */
export interface CallRequest<S extends DelegatedStore, M extends DelegatedMethod<S>> {
  readonly kind: 'call';
  readonly unit: number;
  readonly store: S;
  readonly method: M;
  readonly args: WriteArgs<S, M>;
}

/**
 * The delegated writes that may share one transaction with others of their kind queued beside them: each is one
 * better-sqlite3 transaction of its own (a savepoint when nested), so one that fails leaves the others whole. A
 * burst of webhook deliveries records an attempt each; one commit (one fsync) for all that queued keeps the writer
 * free for plant writes.
 */
export const SHARED_TRANSACTION_CALLS: ReadonlySet<string> = new Set(['webhooks.recordAttempt']);

/** Several delegated writes of SHARED_TRANSACTION_CALLS, applied in one transaction, each settled on its own. */
export interface CallsRequest {
  readonly kind: 'calls';
  readonly unit: number;
  readonly calls: readonly UntypedCall[];
}

/** A delegated write as it crosses in a CallsRequest (each was type-checked where it was made). */
export interface UntypedCall {
  readonly store: DelegatedStore;
  readonly method: string;
  readonly args: readonly unknown[];
}

/** One call's outcome in a CallsRequest's reply. */
export type SettledCall =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly failure: WriteFailure };

/** How a failure is reported: enough to rebuild the error on the other side. */
export interface WriteFailure {
  readonly message: string;
  /** The store could not serve the write now (locked, full, failing disk): a 503, not a 500. */
  readonly unavailable: boolean;
  /** SQLite's result code, e.g. SQLITE_FULL. */
  readonly code?: string;
}

/** What the main thread sends; a call is of some write S.M, checked where it was made. */
export type WriterRequest<S extends DelegatedStore, M extends DelegatedMethod<S>> =
  PlantsRequest | CallRequest<S, M> | CallsRequest | CloseRequest;

/** One batch of plant writes: one transaction. */
export interface PlantsRequest {
  readonly kind: 'plants';
  readonly unit: number;
  readonly writes: readonly PlantWrite[];
}

export interface CloseRequest {
  readonly kind: 'close';
}

export type WriterReply =
  | { readonly unit: number; readonly ok: true; readonly value: unknown }
  | { readonly unit: number; readonly ok: false; readonly failure: WriteFailure };
