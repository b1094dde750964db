/**
 * A reader thread: one read-only connection serving the heavy plant reads one message at a time, so the event
 * loop never waits for them (better-sqlite3's advice for slow reads). WAL lets them read while the writer writes.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ReadTimeLimitError, StoreUnavailableError } from '../errors.js';
import { SqliteChangeReads } from './change-log.js';
import { openReadConnection } from './connection.js';
import { sqliteCode, translateError } from './errors.js';
import { SqliteExports } from './plant-export.js';
import { SqlitePlantFinder } from './plant-find.js';
import { ReadBudget } from './read-budget.js';
import type {
  ReadArgs,
  ReadFailure,
  ReadHandlers,
  ReaderCloseRequest,
  ReaderReply,
  ReadMethod,
  ReadRequest,
  ReadStore,
} from './reader-protocol.js';

export interface ReaderWorkerData {
  readonly path: string;
  readonly busyTimeoutMs: number;
  /** READ_TIME_LIMIT_MS: how long one read may run. */
  readonly timeLimitMs: number;
}

const port = parentPort;
if (port === null) throw new Error('reader-worker must run as a worker thread');
const { path, busyTimeoutMs, timeLimitMs } = workerData as ReaderWorkerData;
const db = openReadConnection(path, busyTimeoutMs);
const budget = new ReadBudget(db, timeLimitMs);
const exports = new SqliteExports(path, busyTimeoutMs);
// The compiler checks this provides each of the DelegatedReads.
const handlers: ReadHandlers = { plants: new SqlitePlantFinder(db), exports, changes: new SqliteChangeReads(db) };

function failureOf(error: unknown): ReadFailure {
  if (error instanceof ReadTimeLimitError) {
    return { message: error.message, unavailable: true, timeLimitMs: error.limitMs };
  }
  const translated = translateError(error);
  const code = sqliteCode(error);
  return {
    message: translated instanceof Error ? translated.message : String(translated),
    unavailable: translated instanceof StoreUnavailableError,
    ...(code === undefined ? {} : { code }),
  };
}

// Generic: whatever read S.M a request names, its arguments are those of S.M (call()
// on the main thread is typed from the same declaration).
port.on('message', <S extends ReadStore, M extends ReadMethod<S>>(request: ReadRequest<S, M> | ReaderCloseRequest) => {
  if (request.kind === 'close') {
    exports.endAll();
    db.close();
    port.close();
    return;
  }
  const store = handlers[request.store] as Record<M, (...args: ReadArgs<S, M>) => unknown>;
  try {
    const value = budget.run(() => store[request.method](...request.args));
    port.postMessage({ unit: request.unit, ok: true, value } satisfies ReaderReply);
  } catch (error) {
    port.postMessage({ unit: request.unit, ok: false, failure: failureOf(error) } satisfies ReaderReply);
  }
});
