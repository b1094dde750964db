/**
 * CONNECTION_TIMEOUT_MS closes a connection whose CLIENT has gone quiet, never one
 * that is quiet because the service is working on its request.
 *
 * Node's idle timeout (Fastify's `connectionTimeout`, the socket's setTimeout)
 * counts any silence on a socket, whoever owes the next byte. A long import is
 * silent while the store applies it, and while the service holds back reading its
 * body (backpressure: the store is behind the parser); both were taken for client
 * idleness, the connection was closed, and the import was committed with nobody
 * left to tell.
 *
 * Node's documented seam decides instead: with a listener on the server's
 * 'timeout' event, Node leaves every timed-out socket (idle timeout and keep-alive
 * timeout alike) to it. The listener closes the socket, as Node would, unless a
 * request on it is in progress and the service, not the client, owes the next
 * step; then it checks again one timeout later. The client owes it when the socket
 * holds response bytes it has not taken, or when a request's body is still
 * arriving and the service is ready to read it. After a check that kept the
 * socket, the next one closes it only if no byte moved in between: a client that
 * goes quiet right after the service was busy gets one whole timeout from then,
 * and a timer that fires late (the event loop was busy, bytes already waiting) is
 * not taken for silence. So a client is closed after between one and two timeouts
 * of its own silence.
 *
 * The request timeout (REQUEST_TIMEOUT_MS, checked by Node apart from this) still
 * bounds how long the whole request may take to arrive.
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
