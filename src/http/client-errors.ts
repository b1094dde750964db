/**
 * Answers to requests Node's parser refuses before Fastify sees them (431, 408 for slowloris, 400 for bytes
 * that are not HTTP), as Error records, sent after the answers owed before them (connection-answers.ts).
 * The socket is closed afterwards: the parser's state is unknown.
 */
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { afterOwedAnswers } from './connection-answers.js';
import { Errors, type CatalogueEntry } from './errors.js';
import type { ServiceLimits } from '../config/service-limits.js';

interface ClientError extends Error {
  readonly code?: string;
  /** llhttp's description of a parse error, e.g. "Invalid header value char". */
  readonly reason?: string;
}

function classify(error: ClientError, limits: ServiceLimits): { entry: CatalogueEntry; message: string } {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        entry: Errors.HEADERS_TOO_LARGE,
        message: `request line and headers exceed the limit of ${limits.maxHeaderSizeBytes} bytes`,
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        entry: Errors.REQUEST_TIMEOUT,
        message: `request not received in time: headers must arrive within ${limits.headersTimeoutMs} ms and the whole request within ${limits.requestTimeoutMs} ms`,
      };
    case 'PLANTSTORE_UPLOAD_TOO_SLOW':
      // Our own message (request-deadlines.ts): the rate it arrived at and the rate required.
      return { entry: Errors.REQUEST_TIMEOUT, message: error.message };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { entry: Errors.BODY_TOO_LARGE, message: 'chunk extensions are too large' };
    default: {
      // The reason is llhttp's fixed text, never the client's bytes.
      const reason =
        typeof error.reason === 'string' && /^[\x20-\x7e]{1,100}$/.test(error.reason) ? `: ${error.reason}` : '';
      return { entry: Errors.BAD_REQUEST, message: `malformed HTTP request${reason}` };
    }
  }
}

/**
 * An Error record written straight to the socket, as no response object exists:
 * with what the app's own responses would carry for it, and Connection: close (the
 * request was not read as the app reads one, so nothing more is read from it).
 */
export function rawErrorResponse(entry: CatalogueEntry, message: string): string {
  const body = JSON.stringify({ error: entry.code, message });
  const headers = {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    Connection: 'close',
  };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
  return [`HTTP/1.1 ${entry.status} ${statusText(entry.status)}`, ...lines, '', body].join('\r\n');
}

function statusText(status: number): string {
  return (
    { 400: 'Bad Request', 408: 'Request Timeout', 413: 'Payload Too Large', 431: 'Request Header Fields Too Large' }[
      status
    ] ?? 'Error'
  );
}

// Sockets already being answered: Node's parser, once failed, reports every later
// chunk of the same connection as another client error.
const answering = new WeakSet<Socket>();

export function clientErrorHandler(
  limits: ServiceLimits,
): (this: FastifyInstance, error: ClientError, socket: Socket) => void {
  return function onClientError(this: FastifyInstance, error, socket) {
    // A reset connection has nobody left to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed || answering.has(socket)) return;
    answering.add(socket);
    const { entry, message } = classify(error, limits);
    // Debug, not warn: hostile or broken clients must not be able to flood the logs.
    this.log.debug({ code: error.code, status: entry.status, remoteAddress: socket.remoteAddress }, 'client error');
    afterOwedAnswers(
      socket,
      limits.requestTimeoutMs,
      () => {
        if (!socket.writable) return void socket.destroy();
        socket.end(rawErrorResponse(entry, message));
        // end() flushes, then half-closes; a peer that never closes its side is cut off.
        setTimeout(() => socket.destroy(), 1000).unref();
      },
      () => socket.destroy(),
    );
  };
}

/**
 * Fastify's router refuses some URLs before any route or hook runs, answering
 * with its own body: bad percent-encoding (FST_ERR_BAD_URL) and path parameters
 * over 100 characters (FST_ERR_MAX_PARAM_LENGTH, a 414). Both become Error
 * records here (`frameworkErrors` option).
 */
export function frameworkErrorHandler(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const [entry, message] =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? [Errors.INVALID_PARAMETER, 'a path parameter is longer than 100 characters']
      : error.code === 'FST_ERR_BAD_URL'
        ? [Errors.BAD_REQUEST, 'the URL is malformed (invalid percent-encoding)']
        : [Errors.BAD_REQUEST, 'the request could not be routed'];
  void reply
    .code(entry.status)
    .headers({ 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' })
    .type('application/json; charset=utf-8')
    .send(JSON.stringify({ error: entry.code, message }));
}
