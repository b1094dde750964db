/**
 * A 304 has no body (RFC 9110 15.4.5). A route answers it with `send(null)`, as its `type: 'null'` response schema
 * types it, and Fastify serialises that as the four bytes `null` with a Content-Length of 4 (it empties only a 204,
 * itself). So a 304 leaves here with neither a body nor representation headers; its ETag stays.
 *
 * The hook goes only on routes that can answer 304: those whose response schemas list it, and those without response
 * schemas (static files). A route that documents its answers and not a 304 never sends one, and most requests go to
 * such routes.
 */
import type { FastifyInstance, onSendHookHandler } from 'fastify';
import fp from 'fastify-plugin';

const emptyNotModified: onSendHookHandler = (_request, reply, payload, done) => {
  if (reply.statusCode !== 304) {
    done(null, payload);
    return;
  }
  reply.removeHeader('content-type');
  reply.removeHeader('content-length');
  done(null, null);
};

function mayAnswerNotModified(responses: unknown): boolean {
  return typeof responses !== 'object' || responses === null || '304' in responses;
}

export const emptyAnswers = fp(
  async (app: FastifyInstance) => {
    app.addHook('onRoute', (route) => {
      if (!mayAnswerNotModified(route.schema?.response)) return;
      const existing = route.onSend;
      route.onSend =
        existing === undefined
          ? [emptyNotModified]
          : [emptyNotModified, ...(Array.isArray(existing) ? existing : [existing])];
    });
  },
  { name: 'empty-answers' },
);
