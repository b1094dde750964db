/**
 * Scalar's Fastify plugin, loaded on the first /docs request: its module embeds the renderer bundle and an
 * OpenAPI parser, a start-up and memory cost most processes would pay for nothing. A listening app cannot
 * add routes, so it lives in a small app of its own that /docs hands requests to with `inject`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { routeNotFound } from '../http/error-handler.js';
import { addVary } from '../http/vary.js';

/** Headers that describe the inner exchange, not the answer; the outer reply sets its own. */
const NOT_FORWARDED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'date']);

export class LazyDocsApp {
  private app: Promise<FastifyInstance> | undefined;

  constructor(
    private readonly routePrefix: `/${string}`,
    private readonly configuration: Record<string, unknown>,
  ) {}

  async forward(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const app = await this.load();
    const response = await app.inject({ method: 'GET', url: request.url });
    // The inner app's own 404 body is Fastify's shape; the service answers with its Error record.
    if (response.statusCode === 404) throw routeNotFound(request.method, request.url);
    for (const [name, value] of Object.entries(response.headers)) {
      if (value === undefined || NOT_FORWARDED.has(name)) continue;
      // The outer reply's Vary (Origin, from CORS) is kept and the inner one's fields added to it.
      if (name === 'vary') void addVary(reply, String(value));
      else void reply.header(name, value);
    }
    return reply.code(response.statusCode).send(response.payload);
  }

  private load(): Promise<FastifyInstance> {
    this.app ??= this.build().catch((error: unknown) => {
      this.app = undefined; // a failed load is retried by the next request
      throw error;
    });
    return this.app;
  }

  private async build(): Promise<FastifyInstance> {
    const [{ default: Fastify }, { default: scalarApiReference }] = await Promise.all([
      import('fastify'),
      import('@scalar/fastify-api-reference'),
    ]);
    const app = Fastify({ logger: false });
    await app.register(scalarApiReference, { routePrefix: this.routePrefix, configuration: this.configuration });
    await app.ready();
    return app;
  }
}
