/**
 * Starts a worker thread from a module next to this one, whether the service runs
 * from dist/ (compiled .js) or from source under tsx (.ts, as the tests do). Node 20
 * does not apply `--import` hooks to workers, so from source the worker registers
 * tsx itself before importing the module.
 *
 * In the bundle `npm start` runs (scripts/bundle-service.ts) this code sits in one of
 * the bundle's files, and the worker's module is an entry of the bundle in the same
 * directory, so "next to this one" holds there too.
 */
import { Worker } from 'node:worker_threads';

const FROM_SOURCE = import.meta.url.endsWith('.ts');

export function spawnWorker(moduleName: string, workerData: unknown): Worker {
  const url = new URL(`./${moduleName}${FROM_SOURCE ? '.ts' : '.js'}`, import.meta.url);
  if (!FROM_SOURCE) return new Worker(url, { workerData });
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(url.href)}); })`;
  return new Worker(bootstrap, { eval: true, workerData });
}
