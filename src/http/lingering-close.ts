/**
 * An answer sent before its request's body has all arrived (413, 401, 415...) must reach a client still
 * sending: closing a socket with unread bytes resets it, and the client loses the answer. So, like nginx's
 * lingering close, the rest of the body is read and discarded, within LINGER_TIMEOUT_MS and LINGER_LIMIT
 * bytes. The answer omits `Connection: close` (Node would close at once); the connection then stays usable.
 */
import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import type { FastifyInstance, onSendHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import type { ServiceLimits } from '../config/service-limits.js';

/** How often a lingering connection's discarded bytes are counted against the limit. */
const CHECK_INTERVAL_MS = 50;

type LingerLimits = Pick<ServiceLimits, 'lingerLimitBytes' | 'lingerTimeoutMs'>;

/** Discards the rest of the request's body within the limits; a body beyond them loses its connection. */
function linger(request: IncomingMessage, limits: LingerLimits): void {
  const socket = request.socket;
  if (request.complete || socket.destroyed) return;
  // Node discards a body the route never read; one the route began to read is discarded here.
  request.resume();
  const startedAt = socket.bytesRead;
  const cut = () => socket.destroy();
  const deadline = setTimeout(cut, limits.lingerTimeoutMs).unref();
  const check = setInterval(() => {
    if (request.complete) stop();
    else if (socket.bytesRead - startedAt > limits.lingerLimitBytes) cut();
  }, CHECK_INTERVAL_MS).unref();
  const stop = () => {
    clearTimeout(deadline);
    clearInterval(check);
  };
  request.once('end', stop);
  socket.once('close', stop);
}

export const lingeringClose = fp(
  async (app: FastifyInstance, limits: LingerLimits) => {
    if (limits.lingerLimitBytes === 0 || limits.lingerTimeoutMs === 0) return;
    const lingerAfterAnswer: onSendHookHandler = (request, reply, payload, done) => {
      const raw = request.raw;
      // Only a network connection can be reset (app.inject's requests have none). A declared
      // body that could not be discarded within the limit is not waited for: its connection
      // closes at once.
      const lingers =
        raw.socket instanceof Socket &&
        !raw.complete &&
        !(Number(raw.headers['content-length']) > limits.lingerLimitBytes);
      if (lingers) {
        const connection = reply.getHeader('connection');
        if (typeof connection === 'string' && connection.toLowerCase() === 'close')
          void reply.removeHeader('connection');
        reply.raw.once('finish', () => linger(raw, limits));
      }
      done(null, payload);
    };
    app.addHook('onSend', lingerAfterAnswer);
  },
  { name: 'lingering-close' },
);
