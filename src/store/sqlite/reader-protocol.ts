/**
 * What the main thread and the reader threads say to each other: the writer
 * thread's pattern (writer-protocol.ts), for reads. Plain data only: messages cross
 * by structured clone (bigints included).
 */
import type { SqliteChangeReads } from './change-log.js';
import type { SqliteExports } from './plant-export.js';
import type { SqlitePlantFinder } from './plant-find.js';
import type { WriteFailure } from './writer-protocol.js';

/**
 * The reads a reader thread runs, by store: declared here and nowhere else. The
 * main thread's call() and the reader thread's dispatch are both typed from it.
 */
export interface DelegatedReads {
  readonly plants: Pick<SqlitePlantFinder, 'page' | 'count' | 'pageCursorSecret'>;
  /** An export's calls go to one thread, which holds its statement between them (plant-export.ts). */
  readonly exports: Pick<SqliteExports, 'begin' | 'next' | 'end'>;
  readonly changes: Pick<SqliteChangeReads, 'after' | 'bounds'>;
}

export type ReadStore = keyof DelegatedReads;
export type ReadMethod<S extends ReadStore> = keyof DelegatedReads[S];

/** The same reads as plain functions of their arguments: what the reader thread's table provides. */
export type ReadHandlers = {
  readonly [S in ReadStore]: {
    readonly [M in ReadMethod<S>]: DelegatedReads[S][M] extends (...args: infer A) => infer R
      ? (...args: A) => R
      : never;
  };
};

export type ReadArgs<S extends ReadStore, M extends ReadMethod<S>> = Parameters<ReadHandlers[S][M]>;
export type ReadResult<S extends ReadStore, M extends ReadMethod<S>> = ReturnType<ReadHandlers[S][M]>;

/** One read: `store.method(...args)`. */
export interface ReadRequest<S extends ReadStore, M extends ReadMethod<S>> {
  readonly kind: 'read';
  readonly unit: number;
  readonly store: S;
  readonly method: M;
  readonly args: ReadArgs<S, M>;
}

export interface ReaderCloseRequest {
  readonly kind: 'close';
}

/** How a read failed: a write's failure (enough to rebuild the error), or the time budget spent. */
export type ReadFailure = WriteFailure & { readonly timeLimitMs?: number };

export type ReaderReply =
  | { readonly unit: number; readonly ok: true; readonly value: unknown }
  | { readonly unit: number; readonly ok: false; readonly failure: ReadFailure };
