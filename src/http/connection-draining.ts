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
 * - A connection that has not delivered a whole request head: one opened ahead of
 *   need (browsers, HTTP clients and load balancers do), a slow client's, or a
 *   keep-alive connection part-way through its next request. Node counts it as busy,
 *   and stops enforcing the headers timeout once closing; it would wait for the
 *   client.
 * So this plugin counts each connection's requests in progress (head delivered,
 * response not yet done), and from the moment the server stops accepting until it
 * has closed, every SWEEP_INTERVAL_MS it ends the connections with none. A request
 * whose head has arrived is never cut: it is answered (with Connection: close,
 * Fastify's doing while closing), then its connection has none in progress.
 * (Fastify's `forceCloseConnections: true` would end every connection at close,
 * cutting the requests in flight too.)
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

const SWEEP_INTERVAL_MS = 50;

export const connectionDraining = fp(
  async (app: FastifyInstance) => {
    const server = app.server;
    /** Every open connection, with its requests in progress (more than one when pipelined). */
    const inProgress = new Map<Socket, number>();
    server.on('connection', (socket: Socket) => {
      inProgress.set(socket, 0);
      socket.once('close', () => inProgress.delete(socket));
    });
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      const socket = request.socket;
      inProgress.set(socket, (inProgress.get(socket) ?? 0) + 1);
      // 'close' comes once the response is done (or its connection gone): the request is no longer in progress.
      response.once('close', () => {
        const count = inProgress.get(socket);
        if (count !== undefined) inProgress.set(socket, count - 1);
      });
    });

    const endConnectionsWithoutRequest = () => {
      // Not while the close hooks run: the server still accepts then, and serves what comes.
      if (server.listening) return;
      for (const [socket, count] of inProgress) if (count === 0) socket.destroy();
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
