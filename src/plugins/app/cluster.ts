/**
 * Where this app runs: alone (WORKERS=1), or as one worker of a multi-worker instance (src/cluster), whose
 * primary owns what the instance has once: the SQLite writer, the rate-limit budgets, the event tickets, the
 * merged metrics. Features ask `app.cluster` for these; null means the process is the whole instance.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Peer } from '../../cluster/peer.js';
import type { PrimaryAnswers, PrimaryHears, WorkerAnswers, WorkerHears } from '../../cluster/protocol.js';

/** The primary, as a worker speaks to it. */
export type PrimaryPeer = Peer<WorkerAnswers, PrimaryAnswers, WorkerHears, PrimaryHears>;

export interface ClusterWorker {
  /** cluster's id of this worker process (a replaced worker gets a new one); in every log line. */
  readonly workerId: number;
  /** Whether this worker runs the instance's background jobs: webhook delivery, retention, recovery sweeps. */
  readonly runsBackgroundJobs: boolean;
  readonly primary: PrimaryPeer;
}

declare module 'fastify' {
  interface FastifyInstance {
    cluster: ClusterWorker | null;
  }
}

export const clusterPlugin = fp(
  async (app: FastifyInstance, options: { readonly worker?: ClusterWorker }) => {
    app.decorate('cluster', options.worker ?? null);
  },
  { name: 'cluster' },
);

/** Whether this process runs the background jobs an instance runs once. */
export function runsBackgroundJobs(app: FastifyInstance): boolean {
  return app.cluster === null || app.cluster.runsBackgroundJobs;
}
