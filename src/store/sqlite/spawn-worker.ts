/**
 * Starts a worker thread from a module next to this one, whether the service runs
 * from dist/ (compiled .js) or from source under tsx (.ts, as the tests do). A
 * worker inherits the process's `--import` hooks (Node 22 and 24), so from source
 * tsx loads the worker's TypeScript as it loads the rest.
 *
 * In the bundle `npm start` runs (scripts/bundle-service.ts) this code sits in one of
 * the bundle's files, and the worker's module is an entry of the bundle in the same
 * directory, so "next to this one" holds there too.
 */
import { Worker } from 'node:worker_threads';

const FROM_SOURCE = import.meta.url.endsWith('.ts');

export function spawnWorker(moduleName: string, workerData: unknown): Worker {
  return new Worker(new URL(`./${moduleName}${FROM_SOURCE ? '.ts' : '.js'}`, import.meta.url), { workerData });
}
