/**
 * What the main thread and the writer thread say to each other. Plain data only:
 * messages cross by structured clone (bigints and Dates included).
 *
 * Plant writes are the hot path: they are grouped into batches, one transaction
 * each. Token and webhook writes are rare; each is sent on its own as a call of the
 * store method of that name, run by the writer thread's instance of that store.
 * Either way the writer thread is the process's only writer, so a write on the main
 * thread can never stall the event loop waiting for the lock a batch holds.
 */
export type PlantWrite =
  | { readonly op: 'create'; readonly id: bigint; readonly name: string; readonly tag: string | null }
  | { readonly op: 'delete'; readonly id: bigint };

export type PlantWriteResult =
  | { readonly kind: 'created' }
  /** The id existed with the same name and tag. */
  | { readonly kind: 'replayed' }
  /** The id existed with different content: this is what is stored. */
  | { readonly kind: 'conflict'; readonly name: string; readonly tag: string | null }
  | { readonly kind: 'deleted'; readonly found: boolean };

/** The store methods that write, by store: the only ones the writer thread will call. */
export const DELEGATED_WRITES = {
  tokens: ['insertToken', 'revokeToken', 'recordTokenUse'],
  webhooks: ['insertSubscription', 'rotateSecret', 'deleteSubscription', 'claimDueDeliveries', 'recordAttempt', 'retryDelivery', 'pruneFinishedEvents'],
} as const;

export type DelegatedStore = keyof typeof DELEGATED_WRITES;

/** How a failure is reported: enough to rebuild the error on the other side. */
export interface WriteFailure {
  readonly message: string;
  /** The store could not serve the write now (locked, full, failing disk): a 503, not a 500. */
  readonly unavailable: boolean;
}

export type WriterRequest =
  | { readonly kind: 'plants'; readonly unit: number; readonly writes: readonly PlantWrite[] }
  | { readonly kind: 'call'; readonly unit: number; readonly store: DelegatedStore; readonly method: string; readonly args: readonly unknown[] }
  | { readonly kind: 'close' };

export type WriterReply =
  | { readonly unit: number; readonly ok: true; readonly value: unknown }
  | { readonly unit: number; readonly ok: false; readonly failure: WriteFailure };
