/** One log line per request, after the response, with its id (Fastify's own two lines are switched off in app.ts). */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { redactUrl } from '../../http/redact.js';

export const requestLog = fp(
  async (app: FastifyInstance) => {
    // A callback hook, not an async one: it runs on every request.
    app.addHook('onResponse', (request, reply, done) => {
      const ms = Math.round(reply.elapsedTime * 100) / 100;
      request.log.info(
        { method: request.method, url: redactUrl(request.url), status: reply.statusCode, ms },
        'request',
      );
      done();
    });
  },
  { name: 'request-log' },
);
