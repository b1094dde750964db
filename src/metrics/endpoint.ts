/**
 * GET /metrics. Who may read it is configurable (METRICS_AUTH, METRICS_PORT) because metrics reveal traffic
 * patterns.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config/index.js';
import { errorRecords } from '../http/error-handler.js';
import { answerOtherMethods, collectRoutes } from '../http/method-not-allowed.js';
import { protocolEdges } from '../http/node-protocol.js';
import { requestDeadlines } from '../http/request-deadlines.js';
import { serverOptions } from '../http/server-options.js';
import { bearerAuth, routeGuard } from '../tokens/auth.js';
import type { ClusterWorker } from '../plugins/app/cluster.js';
import type { ServiceMetrics } from './service-metrics.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The separate listener serving /metrics when METRICS_PORT is set, once the app is ready. */
    metricsServer: FastifyInstance | null;
  }
}

const EXAMPLE = [
  '# HELP plantstore_http_requests_total HTTP requests answered, by method, route template and status code.',
  '# TYPE plantstore_http_requests_total counter',
  'plantstore_http_requests_total{method="POST",route="/plants",status_code="200"} 1027',
].join('\n');

function metricsRoute(
  app: FastifyInstance,
  metrics: ServiceMetrics,
  config: Config,
  cluster: ClusterWorker | null,
): void {
  const where =
    config.metricsPort === undefined
      ? 'on the API port'
      : `only on METRICS_PORT (${config.metricsHost}:${config.metricsPort}), not on the API port`;
  app.get(
    '/metrics',
    {
      schema: {
        operationId: 'metrics',
        summary: 'Prometheus metrics',
        description:
          'Metrics in the Prometheus text format: requests by route and status, request latency histograms, store call ' +
          'latency and errors, connection-pool usage (PostgreSQL), and the Node.js process metrics.\n\n' +
          `${config.metricsAuth === 'admin' ? "Needs a token with the `metrics:read` scope (a scraper's, which can do nothing else) or the `admin` scope" : 'Open to anyone who can reach it'} ` +
          `(METRICS_AUTH=admin|none), served ${where}. See docs/deploying.md.`,
        tags: ['service'],
        security: config.metricsAuth === 'admin' ? bearerAuth('metrics:read', 'admin') : [],
        response: {
          200: {
            description: 'The current metrics.',
            content: { 'text/plain': { schema: { type: 'string', examples: [EXAMPLE] } } },
          },
        },
      },
    },
    // A worker of a multi-worker instance answers with every worker's metrics, merged by the primary (src/cluster).
    async (_request, reply) =>
      reply
        .type(metrics.contentType)
        .send(await (cluster === null ? metrics.render() : cluster.primary.ask('metrics', null))),
  );
}

/**
 * GET /metrics: on the API port (documented with the other operations), or with
 * METRICS_PORT on its own listener instead.
 */
export const metricsRoutes = fp(
  async (app: FastifyInstance) => {
    app.decorate('metricsServer', null);
    if (app.config.metricsPort === undefined) metricsRoute(app, app.metrics, app.config, app.cluster);
    else serveSeparately(app, app.config, app.config.metricsPort);
  },
  {
    name: 'metrics-routes',
    dependencies: ['metrics', 'auth', 'query-string-rules', 'collect-routes', 'cluster'],
    decorators: { fastify: ['config'] },
  },
);

/** /metrics on its own port, with the API's authentication, Error records, server limits and protocol edges. */
function serveSeparately(app: FastifyInstance, config: Config, port: number): void {
  app.addHook('onReady', async () => {
    const server = Fastify({ loggerInstance: app.log.child({ listener: 'metrics' }), ...serverOptions(config.limits) });
    server.decorate('authenticator', app.authenticator);
    await server.register(errorRecords, { bodyLimit: config.bodyLimitBytes });
    await server.register(protocolEdges, { continueFromRoutes: false });
    await server.register(requestDeadlines, {
      requestTimeoutMs: config.limits.requestTimeoutMs,
      minUploadBytesPerSecond: config.importMinBytesPerSecond,
    });
    await server.register(routeGuard);
    await server.register(collectRoutes);
    metricsRoute(server, app.metrics, config, app.cluster);
    await server.register(answerOtherMethods);
    await server.listen({ host: config.metricsHost, port });
    app.metricsServer = server;
    app.log.info({ address: server.server.address() }, 'metrics listening');
  });
  app.addHook('onClose', async () => {
    await app.metricsServer?.close();
  });
}
