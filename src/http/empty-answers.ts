/**
 * A 304 has no body (RFC 9110 15.4.5). A route answers it with `send(null)`, as its `type: 'null'` response schema
 * types it, and Fastify serialises that as the four bytes `null` with a Content-Length of 4 (it empties only a 204,
 * itself). So a 304 leaves here with neither a body nor representation headers; its ETag stays.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export const emptyAnswers = fp(
  async (app: FastifyInstance) => {
    app.addHook('onSend', (_request, reply, payload, done) => {
      if (reply.statusCode !== 304) {
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
