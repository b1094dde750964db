/** Starting and stopping: on SIGTERM/SIGINT, stop accepting, let in-flight requests finish, close the store, exit 0. */
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Config } from './config/index.js';
import type { ClusterWorker } from './plugins/app/cluster.js';
import { describeStore } from './system/store-description.js';
import { SERVICE_VERSION } from './system/version.js';
import { firstStartToken, hasNoTokens, type IssuedToken } from './tokens/token-service.js';

export interface RunningServer {
  readonly app: FastifyInstance;
  /** Base URL clients can use, e.g. http://127.0.0.1:8080. */
  readonly url: string;
  /** Set on the first start on an empty store. */
  readonly bootstrapToken?: IssuedToken;
  stop(): Promise<void>;
}

export interface StartOptions {
  readonly logStream?: NodeJS.WritableStream;
  /** Whether a store with no tokens gets one (false in a worker: its instance's primary has done it). */
  readonly bootstrap?: boolean;
  /** Set when this process is one worker of a multi-worker instance (src/cluster). */
  readonly worker?: ClusterWorker;
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const app = await buildApp(config, { logStream: options.logStream, worker: options.worker });
  let bootstrapToken: IssuedToken | undefined;
  try {
    // Asked before listening, while a failing store still fails the start; made once listening (below).
    const firstStart = options.bootstrap !== false && (await hasNoTokens(app.store.tokens));
    await app.listen({
      host: config.host,
      port: config.port,
      // A worker's own line: the instance's "Server listening at" comes from its primary once every worker listens.
      ...(options.worker === undefined ? {} : { listenTextResolver: (address) => `worker listening at ${address}` }),
    });
    // Only once the address is ours: a start that fails to listen prints no banner, so a token
    // made before it would be one nobody saw, and the next start (the store no longer empty) would make none.
    if (firstStart) bootstrapToken = await firstStartToken(app.store.tokens, app.log);
  } catch (error) {
    // Closed before the caller sees the error: the CLI exits at once on it, and an
    // exit while the store's writer thread is still loading SQLite kills the process
    // with a fatal error rather than the exit status that names the problem.
    await app
      .close()
      .catch((closeError: unknown) => app.log.error({ err: closeError }, 'closing the store after a failed start'));
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  const host = ['0.0.0.0', '::', ''].includes(config.host) ? '127.0.0.1' : config.host;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  // Ends the connections with no request in progress as it goes (http/connection-draining.ts).
  const stop = () => app.close();
  return { app, url, bootstrapToken, stop };
}

export function bootstrapBanner(url: string, token: IssuedToken): string {
  const curl =
    `curl -i -X POST ${url}/plants \\\n` +
    `     -H 'Authorization: Bearer ${token.secret}' \\\n` +
    `     -H 'Content-Type: application/json' \\\n` +
    `     -d '{"id": 1, "name": "Monstera deliciosa", "tag": "houseplant"}'`;
  const rule = '='.repeat(78);
  return [
    rule,
    `Plant Store is running at ${url}  (interactive API reference: ${url}/docs)`,
    '',
    `This store had no tokens, so one with every scope (${token.record.scopes.join(', ')}) was created`,
    `and named '${token.record.name}'. It is shown only this once; keep it somewhere safe:`,
    '',
    `    ${token.secret}`,
    '',
    'Try it:',
    '',
    curl,
    '',
    'Manage tokens with: plantstore token create|list|revoke   (see plantstore token --help)',
    rule,
  ].join('\n');
}

/** Stops accepting, lets in-flight requests finish within `timeoutMs`, then exits: 0 once stopped, 1 otherwise. */
export function drainAndExit(server: RunningServer, timeoutMs: number, signal?: NodeJS.Signals): void {
  server.app.log.info({ signal }, 'shutting down: finishing in-flight requests');
  const force = setTimeout(() => {
    server.app.log.error({ timeoutMs }, 'shutdown timed out; exiting');
    process.exit(1);
  }, timeoutMs);
  force.unref();
  server.stop().then(
    () => {
      server.app.log.info('stopped');
      process.exit(0);
    },
    (error: unknown) => {
      server.app.log.error({ err: error }, 'error while shutting down');
      process.exit(1);
    },
  );
}

/** Runs until SIGTERM or SIGINT, then shuts down gracefully. */
export async function runServer(config: Config): Promise<void> {
  // Listened for before starting: the service accepts connections (and says so) a
  // moment before startServer returns, and a SIGTERM in that moment must still mean
  // a graceful stop, not Node's default of dying at once.
  let early: NodeJS.Signals | undefined;
  let onSignal = (signal: NodeJS.Signals): void => {
    early ??= signal;
  };
  process.on('SIGTERM', (signal) => onSignal(signal));
  process.on('SIGINT', (signal) => onSignal(signal));
  const server = await startServer(config);
  server.app.log.info(
    { version: SERVICE_VERSION, node: process.version, store: describeStore(config.databaseUrl) },
    `Plant Store ${SERVICE_VERSION} running on Node.js`,
  );
  if (server.bootstrapToken !== undefined)
    process.stdout.write(`\n${bootstrapBanner(server.url, server.bootstrapToken)}\n\n`);
  let stopping = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    drainAndExit(server, config.shutdownTimeoutMs, signal);
  };
  onSignal = shutdown;
  if (early !== undefined) shutdown(early);
}
