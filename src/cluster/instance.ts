/** `plantstore serve` with WORKERS > 1: the primary, or one of its workers (docs/deploying.md, "Workers"). */
import cluster from 'node:cluster';
import type { Config } from '../config/index.js';
import { runPrimary } from './primary.js';
import { runWorker } from './worker.js';

export function runInstance(config: Config): Promise<void> {
  return cluster.isPrimary ? runPrimary(config) : runWorker(config);
}
