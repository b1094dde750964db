/**
 * Requests Node's HTTP server answers (or drops) by itself before Fastify sees
 * them, brought under the rule that every failure is an Error record:
 *
 * - `Expect` other than `100-continue`: Node answers a bare 417. RFC 9110 (10.1.1)
 *   lets a server ignore an expectation it does not support, so it is ignored and
 *   the request served as usual. (`100-continue`: see leaveContinueToRoutes below.)
 * - `CONNECT`: Node closes the connection without a word. It gets a 400 Error
 *   record instead: this server is not a proxy.
 * - An HTTP/1.1 request without `Host`: RFC 9112 (3.2) requires a 400, which Node
 *   sends bare, with no body. Node's check is turned off (`requireHostHeader: false`
 *   in server-options.ts) and the request refused here, with an Error record, before
 *   Fastify sees it. HTTP/1.0 has no Host requirement.
 * - Pipelined requests (several sent on one connection without waiting for the
 *   answers): Node hands each to the app as soon as it is parsed and only queues
 *   the responses, so a GET pipelined after a DELETE could be read before the
 *   delete was applied, and answer with the deleted plant. RFC 9112 (9.3.2) allows
 *   parallel handling only when every request is safe. Each one now waits until the
 *   response before it has been sent: Node gives a queued response its socket
 *   (the 'socket' event) at exactly that moment. A request that is not pipelined
 *   has its socket already, so it goes on at once, at the cost of one check.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { preParsingHookHandler } from 'fastify';
import { errorRecordOutsideApp, rawErrorResponse } from './client-errors.js';
import { Errors } from './errors.js';

function refuseWithoutHost(request: IncomingMessage, response: ServerResponse): void {
  const { body, headers } = errorRecordOutsideApp(Errors.BAD_REQUEST, 'malformed HTTP request: an HTTP/1.1 request must carry a Host header');
  response.shouldKeepAlive = false;
  response.writeHead(Errors.BAD_REQUEST.status, headers);
  response.end(body);
  request.resume(); // any body is discarded, not left to stall the socket
}

/** Puts the Host check and the pipelining order in front of the server's request handlers (Fastify's). */
function guardRequests(server: Server): void {
  const handlers = server.listeners('request') as ((request: IncomingMessage, response: ServerResponse) => void)[];
  server.removeAllListeners('request');
  const dispatch = (request: IncomingMessage, response: ServerResponse) => {
    if (request.headers.host === undefined && request.httpVersionMinor === 1 && request.httpVersionMajor === 1) {
      refuseWithoutHost(request, response);
      return;
    }
    for (const handler of handlers) handler.call(server, request, response);
  };
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    // No socket yet: an earlier response on this connection is still being answered.
    // If the connection closes first, this request is never handled (its client is gone).
    if (response.socket === null) response.once('socket', () => dispatch(request, response));
    else dispatch(request, response);
  });
}

export function handleNodeProtocolEdges(server: Server): void {
  guardRequests(server);
  server.on('checkExpectation', (request, response) => {
    server.emit('request', request, response);
  });
  server.on('connect', (_request, socket) => {
    socket.on('error', () => {});
    socket.end(rawErrorResponse(Errors.BAD_REQUEST, 'CONNECT is not supported: this server is not a proxy'));
    setTimeout(() => socket.destroy(), 1000).unref();
  });
}

/**
 * `Expect: 100-continue` asks the server whether to send the body at all. Node says
 * yes (100 Continue) at once, before authentication, so a client without a valid
 * token, or with a body over BODY_LIMIT, was invited to upload it only to be refused.
 * With this listener Node leaves the answer to the service: `sendContinue` (a
 * preParsing hook of the operations that take a body) sends the 100 when the body
 * is about to be read, after authentication and rate limiting have let the request
 * through, and only if the declared length is within the limit (else the parser
 * answers 413 without reading). An operation without a body never asks for one.
 */
export function leaveContinueToRoutes(server: Server): void {
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    server.emit('request', request, response);
  });
}

export const sendContinue: preParsingHookHandler = (request, reply, payload, done) => {
  const expect = request.headers.expect;
  if (expect !== undefined && expect.toLowerCase() === '100-continue' && !(Number(request.headers['content-length']) > request.routeOptions.bodyLimit)) {
    reply.raw.writeContinue();
  }
  done(null, payload);
};
