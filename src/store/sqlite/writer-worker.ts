/**
 * The writer thread, owner of the process's only writing connection: plant-write batches as one fsync'd
 * transaction each, token and webhook writes one message at a time (attempt records that queued together in one
 * transaction), so the event loop never waits for the disk or the write lock.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { StoreUnavailableError } from '../errors.js';
import { translateError } from './errors.js';
import { WriterConnection } from './writer-connection.js';
import type {
  DelegatedMethod,
  DelegatedStore,
  SettledCall,
  WriteFailure,
  WriterReply,
  WriterRequest,
} from './writer-protocol.js';

export interface WriterWorkerData {
  readonly path: string;
  readonly busyTimeoutMs: number;
}

const port = parentPort;
if (port === null) throw new Error('writer-worker must run as a worker thread');
const { path, busyTimeoutMs } = workerData as WriterWorkerData;
const connection = new WriterConnection(path, busyTimeoutMs);

async function run<S extends DelegatedStore, M extends DelegatedMethod<S>>(
  request: Exclude<WriterRequest<S, M>, { kind: 'close' }>,
): Promise<unknown> {
  if (request.kind === 'plants') return connection.applyPlantWrites(request.writes);
  if (request.kind === 'calls')
    return (await connection.callTogether(request.calls)).map((settled): SettledCall =>
      settled.status === 'fulfilled'
        ? { ok: true, value: settled.value }
        : { ok: false, failure: failureOf(settled.reason) },
    );
  return connection.call(request.store, request.method, request.args);
}

/** A failed write as the main thread rebuilds it (WriteFailure). */
function failureOf(error: unknown): WriteFailure {
  const translated = translateError(error);
  const code = (error as { code?: unknown }).code;
  return {
    message: String((translated as Error).message),
    unavailable: translated instanceof StoreUnavailableError,
    ...(typeof code === 'string' ? { code } : {}),
  };
}

// Requests are handled strictly one after another: the store methods run their SQL
// synchronously, so each one's promise has settled before the next message arrives.
// Generic: whatever write S.M a call names, its arguments are those of S.M (call()
// on the main thread is typed from the same declaration).
port.on('message', <S extends DelegatedStore, M extends DelegatedMethod<S>>(request: WriterRequest<S, M>) => {
  if (request.kind === 'close') {
    connection.close();
    port.close();
    return;
  }
  run(request)
    .then(
      (value) => port.postMessage({ unit: request.unit, ok: true, value } satisfies WriterReply),
      (error: unknown) =>
        port.postMessage({ unit: request.unit, ok: false, failure: failureOf(error) } satisfies WriterReply),
    )
    // Still before the next message: the upkeep a write left (an import's), its answer sent.
    .finally(() => connection.afterReply());
});
