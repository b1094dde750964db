/**
 * The writer thread: owns the process's only writing connection to the store. It
 * applies each batch of plant writes as one fsync'd transaction (BatchWriter) and
 * runs the rare token and webhook writes with its own instances of those stores,
 * one message at a time, in the order sent. The event loop thus never waits for
 * the disk or for the write lock. Reads stay on the main thread's connection (WAL
 * lets readers and this writer work at once).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { StoreUnavailableError } from '../errors.js';
import { BatchWriter } from './batch-writer.js';
import { openConnection } from './connection.js';
import { translateError } from './errors.js';
import { SqliteTokenStore } from './token-store.js';
import { SqliteWebhookStore } from './webhook-store.js';
import { DELEGATED_WRITES, type WriterReply, type WriterRequest } from './writer-protocol.js';

export interface WriterWorkerData {
  readonly path: string;
  readonly busyTimeoutMs: number;
}

type Method = (...args: unknown[]) => Promise<unknown>;

const port = parentPort;
if (port === null) throw new Error('writer-worker must run as a worker thread');
const { path, busyTimeoutMs } = workerData as WriterWorkerData;
const db = openConnection(path, busyTimeoutMs);
const plants = new BatchWriter(db);
const stores = { tokens: new SqliteTokenStore(db), webhooks: new SqliteWebhookStore(db) };

async function run(request: Exclude<WriterRequest, { kind: 'close' }>): Promise<unknown> {
  if (request.kind === 'plants') return plants.apply(request.writes);
  if (!(DELEGATED_WRITES[request.store] as readonly string[]).includes(request.method)) {
    throw new Error(`${request.store}.${request.method} is not a delegated write`);
  }
  const store = stores[request.store] as unknown as Record<string, Method>;
  return (store[request.method] as Method).apply(store, [...request.args]);
}

// Requests are handled strictly one after another: the store methods run their SQL
// synchronously, so each one's promise has settled before the next message arrives.
port.on('message', (request: WriterRequest) => {
  if (request.kind === 'close') {
    db.close();
    port.close();
    return;
  }
  run(request).then(
    (value) => port.postMessage({ unit: request.unit, ok: true, value } satisfies WriterReply),
    (error: unknown) => {
      const translated = translateError(error);
      const failure = { message: String((error as Error).message), unavailable: translated instanceof StoreUnavailableError };
      port.postMessage({ unit: request.unit, ok: false, failure } satisfies WriterReply);
    },
  );
});
