/**
 * CONNECTION_TIMEOUT_MS closes a connection whose client has gone quiet, never one quiet because the service
 * is working on its request. Node's idle timeout counts any silence: a long import (or its body held back by
 * backpressure) was closed mid-way and committed with nobody left to tell.
 *
 * With a listener on the server's 'timeout' event, Node leaves timed-out sockets to us. It closes the socket
 * unless a request is in progress and the service owes the next step, then checks again one timeout later,
 * closing only if no byte moved in between (a late timer is not taken for silence). So a client is closed
 * after one to two timeouts of its own silence. REQUEST_TIMEOUT_MS still bounds the whole request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

const BUSY = -1;

/** Whether the client owes the next step on this socket (the service is not the one holding it up). */
function clientOwes(socket: Socket, requests: ReadonlySet<IncomingMessage>): boolean {
  if (socket.writableLength > 0) return true;
  for (const request of requests) {
    if (request.complete) continue;
    // A full body buffer or a paused socket: the service is not reading, so the client cannot send.
    const heldBack = socket.isPaused() || request.readableLength >= request.readableHighWaterMark;
    if (!heldBack) return true;
  }
  return false;
}

export const idleConnections = fp(
  async (app: FastifyInstance) => {
    const server = app.server;
    /** Each connection's requests in progress (head delivered, response not yet done). */
    const inProgress = new Map<Socket, Set<IncomingMessage>>();
    /**
     * Bytes moved on a connection (read and written) at its last timeout that kept
     * it open; BUSY when the service was the one holding it up then.
     */
    const keptAt = new WeakMap<Socket, number>();

    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      const socket = request.socket;
      let requests = inProgress.get(socket);
      if (requests === undefined) {
        const created = new Set<IncomingMessage>();
        inProgress.set(socket, created);
        socket.once('close', () => inProgress.delete(socket));
        requests = created;
      }
      requests.add(request);
      response.once('close', () => {
        requests.delete(request);
        keptAt.delete(socket);
      });
    });

    server.on('timeout', (socket: Socket) => {
      const moved = socket.bytesRead + socket.bytesWritten;
      const requests = inProgress.get(socket);
      const busy = requests !== undefined && requests.size > 0 && !clientOwes(socket, requests);
      const before = keptAt.get(socket);
      const timeout = socket.timeout ?? 0;
      if ((busy || (before !== undefined && before !== moved)) && timeout > 0) {
        keptAt.set(socket, busy ? BUSY : moved);
        socket.setTimeout(timeout);
        return;
      }
      socket.destroy();
    });
  },
  { name: 'idle-connections' },
);
