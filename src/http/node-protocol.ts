/**
 * HTTP/1.1 rules Node leaves to the application, or answers outside the Error records, via Fastify hooks and
 * Node's documented server events:
 * - Host (RFC 9112 3.2): missing on HTTP/1.1, repeated or malformed: 400 (Node's own check answers a bare 400).
 * - Content-Type sent twice: 400 (Node keeps the first).
 * - Pipelining: Node hands requests on as parsed, so a GET could run before the DELETE ahead of it; RFC 9112
 *   9.3.2 allows that only for safe requests, so each waits until the response before it is sent (waitForTurn).
 * - `Expect` other than `100-continue`: ignored, as RFC 9110 10.1.1 allows, rather than Node's bare 417.
 * - `CONNECT`: a 400 Error record rather than Node's silent close; this is not a proxy.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, onRequestHookHandler, preParsingHookHandler, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { rawErrorResponse } from './client-errors.js';
import { trackExchange } from './connection-answers.js';
import { Errors, failure } from './errors.js';

// RFC 9112 3.2 / RFC 3986 3.2.2: an IP literal, or a name of unreserved,
// percent-encoded and sub-delimiter characters (possibly empty), and a port.
const HOST_VALUE = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]*)(?::[0-9]*)?$/;

/** Why the request's head breaks a rule Node lets through, or undefined. */
export function headProblem(request: IncomingMessage): string | undefined {
  const raw = request.rawHeaders;
  let hosts = 0;
  let contentTypes = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length === 4 && name.toLowerCase() === 'host') hosts++;
    else if (name.length === 12 && name.toLowerCase() === 'content-type') contentTypes++;
  }
  if (hosts === 0) {
    const needsHost = request.httpVersionMajor === 1 && request.httpVersionMinor === 1;
    return needsHost ? 'malformed HTTP request: an HTTP/1.1 request must carry a Host header' : undefined;
  }
  if (hosts > 1) return 'malformed HTTP request: send exactly one Host header';
  if (!HOST_VALUE.test(request.headers.host ?? ''))
    return 'malformed HTTP request: the Host header value is not a valid host[:port]';
  if (contentTypes > 1) return 'send exactly one Content-Type header';
  return undefined;
}

/**
 * The seam Node's public API leaves: a queued response gets its socket (the
 * 'socket' event) at the moment the response before it has been sent, and a
 * response that is not queued has it already. test/hostile/protocol.test.ts pins
 * the order this gives (a POST, DELETE and GET of one plant in one write).
 */
function waitForTurn(response: ServerResponse, go: () => void): void {
  // If the connection closes first, the request is never handled: its client is gone.
  if (response.socket === null) response.once('socket', () => go());
  else go();
}

const inTurnAndWellFormed: onRequestHookHandler = (request, reply, done) => {
  const problem = headProblem(request.raw);
  if (problem !== undefined) {
    // The request was not read as usual, so nothing more is read from the connection.
    void reply.header('connection', 'close');
    done(failure('BAD_REQUEST', [problem]));
    return;
  }
  waitForTurn(reply.raw, done);
};

export interface ProtocolEdgeOptions {
  /** Leave the answer to `Expect: 100-continue` to sendContinue (routes with a body). */
  readonly continueFromRoutes: boolean;
}

/** The above; registered before any hook that acts on a request (rate limiting, auth). */
export const protocolEdges = fp(
  async (app: FastifyInstance, options: ProtocolEdgeOptions) => {
    const server = app.server;
    const route = (request: IncomingMessage, response: ServerResponse) => {
      trackExchange(request, response);
      app.routing(request, response);
    };
    server.on('request', trackExchange);
    server.on('checkExpectation', route);
    if (options.continueFromRoutes) server.on('checkContinue', route);
    server.on('connect', (_request, socket) => {
      socket.on('error', () => {});
      socket.end(rawErrorResponse(Errors.BAD_REQUEST, 'CONNECT is not supported: this server is not a proxy'));
      setTimeout(() => socket.destroy(), 1000).unref();
    });
    app.addHook('onRequest', inTurnAndWellFormed);
    if (options.continueFromRoutes) app.addHook('onRoute', answerContinueWhenReading);
  },
  { name: 'protocol-edges' },
);

/**
 * `Expect: 100-continue`: Node would say yes at once, inviting an upload that authentication or BODY_LIMIT then
 * refuses. With `continueFromRoutes` this preParsing hook sends the 100 only after authentication and rate
 * limiting, and only for a declared length within the limit (else the parser answers 413 without reading).
 */
const sendContinue: preParsingHookHandler = (request, reply, payload, done) => {
  const expect = request.headers.expect;
  if (
    expect !== undefined &&
    expect.toLowerCase() === '100-continue' &&
    !(Number(request.headers['content-length']) > request.routeOptions.bodyLimit)
  ) {
    reply.raw.writeContinue();
  }
  done(null, payload);
};

function answerContinueWhenReading(route: RouteOptions): void {
  if (route.schema?.body === undefined) return;
  const existing = route.preParsing;
  route.preParsing = existing === undefined ? [sendContinue] : [sendContinue, ...[existing].flat()];
}
