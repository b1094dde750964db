/**
 * GET /metrics: Prometheus exposition of the service's metrics.
 *
 * Who can read it is configurable, because metrics reveal traffic patterns:
 * - METRICS_AUTH=admin (default): a bearer token with the `admin` scope is needed
 *   (Prometheus: `authorization: { credentials_file: ... }` in the scrape config).
 * - METRICS_AUTH=none: anyone who can reach the port.
 * - METRICS_PORT=<port>: /metrics moves to its own listener on METRICS_HOST
 *   (default 127.0.0.1), off the public API port; METRICS_AUTH still applies.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { Config } from '../config/index.js';
import { registerErrorHandlers } from '../http/error-handler.js';
import { registerMethodNotAllowed } from '../http/method-not-allowed.js';
import { registerProtocolEdges } from '../http/node-protocol.js';
import { registerOperation, type Operation } from '../http/operation.js';
import { serverOptions } from '../http/server-options.js';
import type { ServiceMetrics } from './service-metrics.js';

declare module 'fastify' {
  interface FastifyInstance {
    metrics: ServiceMetrics;
    /** The separate listener serving /metrics when METRICS_PORT is set, once the app is ready. */
    metricsServer: FastifyInstance | null;
  }
}

const EXAMPLE = [
  '# HELP plantstore_http_requests_total HTTP requests answered, by method, route template and status code.',
  '# TYPE plantstore_http_requests_total counter',
  'plantstore_http_requests_total{method="POST",route="/plants",status_code="200"} 1027',
].join('\n');

export function metricsOperation(metrics: ServiceMetrics, config: Config): Operation {
  const where = config.metricsPort === undefined ? 'on the API port' : `only on METRICS_PORT (${config.metricsHost}:${config.metricsPort}), not on the API port`;
  return {
    operationId: 'metrics',
    method: 'GET',
    path: '/metrics',
    summary: 'Prometheus metrics',
    description:
      'Metrics in the Prometheus text format: requests by route and status, request latency histograms, store call ' +
      'latency and errors, connection-pool usage (PostgreSQL), and the Node.js process metrics.\n\n' +
      `${config.metricsAuth === 'admin' ? 'Needs a token with the `admin` scope' : 'Open to anyone who can reach it'} ` +
      `(METRICS_AUTH=admin|none), served ${where}. See docs/deploying.md.`,
    tags: ['service'],
    scope: config.metricsAuth === 'admin' ? 'admin' : null,
    success: { status: 200, description: 'The current metrics.', schema: { type: 'string' }, contentType: 'text/plain', example: EXAMPLE },
    errors: [],
    async handler(_request, reply) {
      const text = await metrics.render();
      return reply.type(metrics.contentType).send(text);
    },
  };
}

/**
 * Sets up GET /metrics. Returns the operation when it belongs on the API port
 * (the caller registers it with the others, so it is documented and gets 405s);
 * with METRICS_PORT it is served on its own listener instead and this returns
 * undefined.
 */
export function metricsEndpoint(app: FastifyInstance, metrics: ServiceMetrics, config: Config): Operation | undefined {
  const operation = metricsOperation(metrics, config);
  app.decorate('metricsServer', null);
  if (config.metricsPort === undefined) return operation;
  serveSeparately(app, operation, config, config.metricsPort);
  return undefined;
}

/**
 * Serves /metrics on its own port, with the same authentication, Error records,
 * server limits (timeouts, request-head size) and protocol edge cases (Host,
 * CONNECT, Expect; node-protocol.ts) as the API. Bound when the app
 * becomes ready, closed with it.
 */
function serveSeparately(app: FastifyInstance, operation: Operation, config: Config, port: number): void {
  app.addHook('onReady', async () => {
    const server = Fastify({ loggerInstance: app.log.child({ listener: 'metrics' }), ...serverOptions(config.limits) });
    server.decorate('authenticator', app.authenticator);
    registerErrorHandlers(server, config.bodyLimitBytes);
    registerOperation(server, operation);
    registerMethodNotAllowed(server, [operation]);
    registerProtocolEdges(server, { continueFromRoutes: false });
    await server.listen({ host: config.metricsHost, port });
    app.metricsServer = server;
    app.log.info({ address: server.server.address() }, 'metrics listening');
  });
  app.addHook('onClose', async () => {
    await app.metricsServer?.close();
  });
}
