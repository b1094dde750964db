/**
 * Closing the app ends every connection that has no request in progress, so a
 * graceful stop waits only for the requests being answered.
 *
 * Node's `server.close()` ends the connections that are idle at that moment and
 * no others. Two kinds would hold the close open, and with it SIGTERM's exit, well
 * past SHUTDOWN_TIMEOUT_MS:
 * - A keep-alive connection whose response ends after close() was called (a create
 *   finishing, a change stream the events plugin ends): idle only later, it would
 *   wait out its keep-alive timeout (72 s).
 * - A connection that has not delivered its first request head: one opened ahead
 *   of need (browsers, HTTP clients and load balancers do) or a slow client's. Node
 *   counts it as busy, and stops enforcing the headers timeout once closing; it would
 *   wait for the client.
 * So from the moment the server stops accepting until it has closed, both are ended
 * every SWEEP_INTERVAL_MS. A request whose head has arrived is never cut: it is
 * answered (with Connection: close, Fastify's doing while closing), then its
 * connection is idle. (Fastify's `forceCloseConnections: true` would end every
 * connection at close, cutting the requests in flight too.)
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

const SWEEP_INTERVAL_MS = 50;

export const connectionDraining = fp(
  async (app: FastifyInstance) => {
    const server = app.server;
    /** Connections that have not yet delivered a request head. */
    const awaitingRequest = new Set<Socket>();
    server.on('connection', (socket: Socket) => {
      awaitingRequest.add(socket);
      socket.once('close', () => awaitingRequest.delete(socket));
    });
    server.on('request', (request: IncomingMessage) => awaitingRequest.delete(request.socket));

    const endConnectionsWithoutRequest = () => {
      // Not while the close hooks run: the server still accepts then, and serves what comes.
      if (server.listening) return;
      server.closeIdleConnections();
      for (const socket of awaitingRequest) socket.destroy();
    };
    app.addHook('preClose', (done) => {
      if (server.listening) {
        const sweep = setInterval(endConnectionsWithoutRequest, SWEEP_INTERVAL_MS).unref();
        server.once('close', () => clearInterval(sweep));
      }
      done();
    });
  },
  { name: 'connection-draining' },
);
