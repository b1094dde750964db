/**
 * Starts a worker thread from a module next to this one, from dist/ (.js), from source under tsx (.ts: a
 * worker inherits the `--import` hooks), or from the bundle, where the worker is an entry in the same folder.
 */
import { Worker } from 'node:worker_threads';

const FROM_SOURCE = import.meta.url.endsWith('.ts');

export function spawnWorker(moduleName: string, workerData: unknown): Worker {
  return new Worker(new URL(`./${moduleName}${FROM_SOURCE ? '.ts' : '.js'}`, import.meta.url), { workerData });
}
