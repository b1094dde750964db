/**
 * 204 and 304 answers have no body (RFC 9110 15.3.5, 15.4.5). A route answers them with `send(null)`, as its
 * `type: 'null'` response schema types it, and Fastify serialises that as the four bytes `null` with a Content-Length
 * of 4 on a 304 (it empties only a 204). So both leave here with neither a body nor representation headers.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

const NO_BODY = new Set([204, 304]);

export const emptyAnswers = fp(
  async (app: FastifyInstance) => {
    app.addHook('onSend', (_request, reply, payload, done) => {
      if (!NO_BODY.has(reply.statusCode)) {
        done(null, payload);
        return;
      }
      reply.removeHeader('content-type');
      reply.removeHeader('content-length');
      done(null, null);
    });
  },
  { name: 'empty-answers' },
);
