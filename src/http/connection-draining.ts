/**
 * Closing the app ends every connection with no request in progress, so a graceful stop waits only for the
 * requests being answered. Node's `server.close()` ends only the connections idle at that moment: a keep-alive
 * connection whose response ends later would wait out its keep-alive timeout, and one without a whole request
 * head counts as busy with no headers timeout once closing. So until the server has closed, every
 * SWEEP_INTERVAL_MS this ends the connections with none in progress; a request whose head arrived is answered.
 * (`forceCloseConnections: true` would cut the requests in flight too.)
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
