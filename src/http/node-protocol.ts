/**
 * Requests Node's HTTP server answers (or drops) by itself before Fastify sees
 * them, brought under the rule that every failure is an Error record:
 *
 * - `Expect` other than `100-continue`: Node answers a bare 417. RFC 9110 (10.1.1)
 *   lets a server ignore an expectation it does not support, so it is ignored and
 *   the request served as usual. (`100-continue` keeps Node's own handling.)
 * - `CONNECT`: Node closes the connection without a word. It gets a 400 Error
 *   record instead: this server is not a proxy.
 */
import type { Server } from 'node:http';
import { rawErrorResponse } from './client-errors.js';
import { Errors } from './errors.js';

export function handleNodeProtocolEdges(server: Server): void {
  server.on('checkExpectation', (request, response) => {
    server.emit('request', request, response);
  });
  server.on('connect', (_request, socket) => {
    socket.on('error', () => {});
    socket.end(rawErrorResponse(Errors.BAD_REQUEST, 'CONNECT is not supported: this server is not a proxy'));
    setTimeout(() => socket.destroy(), 1000).unref();
  });
}
