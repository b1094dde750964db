/**
 * One worker of a multi-worker instance: the whole app on the instance's port (node:cluster shares it), its store
 * opened for reading, SQLite writes sent to the primary (primary.ts). It drains on SIGTERM as a single process
 * does, and exits when the primary is gone (node:cluster ends a worker whose IPC channel closes).
 */
import cluster from 'node:cluster';
import type { Config } from '../config/index.js';
import type { PrimaryPeer } from '../plugins/app/cluster.js';
import { drainAndExit, startServer } from '../server.js';
import { BACKGROUND_SLOT } from './background-slot.js';
import { Peer, primaryChannel } from './peer.js';

export async function runWorker(config: Config): Promise<void> {
  // Listened for before starting, as in runServer: a signal while starting still means a graceful stop.
  let signalled = false;
  let onSignal = (): void => {
    signalled = true;
  };
  process.on('SIGTERM', () => onSignal());
  process.on('SIGINT', () => onSignal());
  const primary: PrimaryPeer = new Peer(primaryChannel());
  const server = await startServer(config, {
    bootstrap: false,
    worker: {
      workerId: cluster.worker?.id ?? 0,
      runsBackgroundJobs: process.env.PLANTSTORE_WORKER_SLOT === String(BACKGROUND_SLOT),
      primary,
    },
  });
  let stopping = false;
  onSignal = () => {
    if (stopping) return;
    stopping = true;
    drainAndExit(server, config.shutdownTimeoutMs);
  };
  if (signalled) onSignal();
  else primary.tell('listening', { url: server.url });
}
