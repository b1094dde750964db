/**
 * Scalar's Fastify plugin, loaded on the first request for /docs rather than at
 * start-up. Its module embeds the whole renderer bundle and pulls in an OpenAPI
 * parser: importing it costs memory and start-up time (bench/README.md, "Figures behind code comments")
 * that every process would pay though most never serve the docs.
 *
 * A plugin cannot add routes to an app that is already listening, so the plugin
 * lives in a small Fastify app of its own, built once, and the service's /docs
 * routes hand each request to it with `inject` (no socket) and copy its answer.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { routeNotFound } from '../http/error-handler.js';

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
      if (value !== undefined && !NOT_FORWARDED.has(name)) void reply.header(name, value);
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
