/**
 * The composition root: builds the whole HTTP app from a config and an open store,
 * without listening (tests drive it with inject or listen on port 0).
 */
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { Config } from './config/index.js';
import { registerDocs } from './docs/routes.js';
import { registerErrorHandlers } from './http/error-handler.js';
import { registerHelmet } from './http/helmet.js';
import { registerCors } from './http/cors.js';
import { registerProtocolEdges } from './http/node-protocol.js';
import { redactUrl } from './http/redact.js';
import { registerJsonBodyParser } from './http/json-body.js';
import { registerMethodNotAllowed } from './http/method-not-allowed.js';
import { buildOpenApiDocument } from './http/openapi.js';
import { registerOperation, type Operation } from './http/operation.js';
import { registerRateLimit } from './http/rate-limit.js';
import { serverOptions } from './http/server-options.js';
import { validatorFactory } from './http/validation.js';
import { loggerOptions } from './logging.js';
import { registerBatchMetrics } from './metrics/batches.js';
import { metricsEndpoint } from './metrics/endpoint.js';
import { registerHttpMetrics } from './metrics/http-metrics.js';
import { instrumentStore } from './metrics/instrument-store.js';
import { registerPoolMetrics } from './metrics/pool.js';
import { ServiceMetrics } from './metrics/service-metrics.js';
import { registerWebhookBacklogMetrics } from './metrics/webhook-backlog.js';
import { plantOperations } from './plants/routes.js';
import type { Store } from './store/types.js';
import { health, openApiOperation, readiness } from './system/routes.js';
import { TokenAuthenticator } from './tokens/authenticator.js';
import { registerWebhookDispatcher } from './webhooks/plugin.js';
import { webhookOperations } from './webhooks/routes.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    store: Store;
    authenticator: TokenAuthenticator;
  }
}

export interface AppDependencies {
  readonly store: Store;
  /** Where logs go; defaults to stdout. Tests pass a stream to read them. */
  readonly logStream?: NodeJS.WritableStream;
}

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export async function buildApp(config: Config, dependencies: AppDependencies): Promise<FastifyInstance> {
  const app = Fastify({
    logger: await loggerOptions(config, dependencies.logStream),
    // Fastify's two lines per request are replaced by our one (onResponse below).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.bodyLimitBytes,
    // Timeouts, header size, protocol-error answers, proxies (docs/security.md).
    ...serverOptions(config.limits),
    requestIdHeader: false,
    // A well-formed X-Request-Id from a proxy is kept, so logs can be correlated.
    genReqId: (request) => {
      const sent = request.headers['x-request-id'];
      return typeof sent === 'string' && CLIENT_REQUEST_ID.test(sent) ? sent : randomUUID();
    },
    // Our validators, as a factory rather than setValidatorCompiler (see validatorFactory).
    schemaController: { compilersFactory: { buildValidator: validatorFactory } },
  });

  // Every store call the app makes is timed and its failures counted (see src/metrics/).
  const metrics = new ServiceMetrics({ storeKind: dependencies.store.kind });
  const store = instrumentStore(dependencies.store, metrics);
  registerPoolMetrics(metrics.registry, dependencies.store);
  registerBatchMetrics(metrics.registry, dependencies.store);
  registerWebhookBacklogMetrics(metrics.registry, dependencies.store);

  app.decorate('config', config);
  app.decorate('metrics', metrics);
  app.decorate('store', store);
  app.decorate('authenticator', new TokenAuthenticator(store.tokens, {
    cacheTtlMs: config.tokenCacheTtlMs,
    onBackgroundError: (error) => app.log.warn({ err: error }, 'could not record token use'),
  }));

  // Callback hooks, not async ones: they run on every request, and an async hook
  // costs a promise and a microtask each time.
  app.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    done();
  });
  // Host, duplicate headers, pipelining order, Expect, CONNECT (node-protocol.ts):
  // before every hook that acts on a request.
  registerProtocolEdges(app, { continueFromRoutes: true });

  // One log line per request, after the response, with its id.
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info(
      { method: request.method, url: redactUrl(request.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime * 100) / 100 },
      'request',
    );
    done();
  });

  registerHttpMetrics(app, metrics);

  registerJsonBodyParser(app, config.bodyLimitBytes);
  registerErrorHandlers(app, config.bodyLimitBytes);

  // After the parser and error handler (CORS adds an OPTIONS route that must use
  // both), before any other route: security headers, CORS (so even a 429 is
  // readable by an allowed origin), then rate limiting.
  registerHelmet(app, config.limits);
  await registerCors(app, config.limits.corsOrigins);
  await registerRateLimit(app, config.limits);

  // Delivers webhook events in the background, from the outbox the stores write.
  registerWebhookDispatcher(app, config, store.webhooks);

  const operations: Operation[] = [...plantOperations, ...webhookOperations, health, readiness];
  const metricsOnApiPort = metricsEndpoint(app, metrics, config);
  if (metricsOnApiPort !== undefined) operations.push(metricsOnApiPort);
  const openApi = openApiOperation(() => buildOpenApiDocument(operations, {
    bodyLimitBytes: config.bodyLimitBytes,
    service: config.limits,
    webhooks: { timeoutMs: config.webhookTimeoutMs, retrySchedule: config.webhookRetrySchedule },
  }));
  operations.push(openApi);
  for (const operation of operations) registerOperation(app, operation);
  registerMethodNotAllowed(app, operations);
  await registerDocs(app);

  await app.ready();
  return app;
}
