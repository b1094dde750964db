/**
 * The composition root: builds the app from a config without listening (tests inject or listen on port 0).
 * Plugins register in layers, in dependency order: the wire (src/http), the app's foundations, external
 * plugins, route conventions, then the features.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { Config } from './config/index.js';
import { consolePage } from './console/routes.js';
import { docsPage } from './docs/routes.js';
import { eventsPlugin } from './events/plugin.js';
import { connectionDraining } from './http/connection-draining.js';
import { errorRecords } from './http/error-handler.js';
import { idleConnections } from './http/idle-connections.js';
import { jsonBodies } from './http/json-body.js';
import { lingeringClose } from './http/lingering-close.js';
import { answerOtherMethods, collectRoutes } from './http/method-not-allowed.js';
import { protocolEdges } from './http/node-protocol.js';
import { requestDeadlines } from './http/request-deadlines.js';
import { queryStringRules } from './http/query-string.js';
import { serializerFactory } from './http/serialization.js';
import { serverOptions } from './http/server-options.js';
import { emptyAnswers } from './http/empty-answers.js';
import { validatorFactory } from './http/validation.js';
import { loggerOptions } from './logging.js';
import { metricsRoutes } from './metrics/endpoint.js';
import { plantsPlugin } from './plants/plugin.js';
import { clusterPlugin, type ClusterWorker } from './plugins/app/cluster.js';
import { metricsPlugin } from './plugins/app/metrics.js';
import { requestLog } from './plugins/app/request-log.js';
import { storePlugin } from './plugins/app/store.js';
import { responseCompression } from './plugins/external/compress.js';
import { corsPolicy } from './plugins/external/cors.js';
import { securityHeaders } from './plugins/external/helmet.js';
import { rateLimiting } from './plugins/external/rate-limit.js';
import { openApiDocument } from './plugins/external/swagger.js';
import type { Store } from './store/types.js';
import { systemPlugin } from './system/routes.js';
import { authPlugin } from './tokens/auth.js';
import { tokensPlugin } from './tokens/routes.js';
import { webhookDispatcher, webhooksPlugin } from './webhooks/plugin.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
  }
}

export interface AppDependencies {
  /** An open store its owner closes; by default the app opens DATABASE_URL and closes it with itself. */
  readonly store?: Store;
  /** Where logs go; defaults to stdout. Tests pass a stream to read them. */
  readonly logStream?: NodeJS.WritableStream;
  /** Set when the app is one worker of a multi-worker instance (src/cluster). */
  readonly worker?: ClusterWorker;
}

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export async function buildApp(config: Config, dependencies: AppDependencies = {}): Promise<FastifyInstance> {
  const { worker } = dependencies;
  const app = Fastify({
    logger: await loggerOptions(
      config,
      dependencies.logStream,
      worker === undefined ? {} : { worker: worker.workerId },
    ),
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
    // Our validators, as a factory rather than setValidatorCompiler (see validatorFactory),
    // and serialisers compiled with only the shared schemas they use (serialization.ts).
    schemaController: { compilersFactory: { buildValidator: validatorFactory, buildSerializer: serializerFactory } },
  });
  try {
    await register(app, config, dependencies);
    await app.ready();
  } catch (error) {
    await app.close();
    throw error;
  }
  return app;
}

async function register(app: FastifyInstance, config: Config, dependencies: AppDependencies): Promise<void> {
  app.decorate('config', config);

  // The wire (src/http): what holds for every request before any plugin acts on it.
  // A callback hook, not an async one: it runs on every request.
  app.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    done();
  });
  // First, so that its onRequest hook runs even when a later one refuses the request.
  await app.register(securityHeaders, config.limits);
  await app.register(emptyAnswers);
  // Host, duplicate headers, pipelining order, Expect, CONNECT (node-protocol.ts):
  // before every hook that acts on a request.
  await app.register(protocolEdges, { continueFromRoutes: true });
  // Closing waits only for requests being answered (connection-draining.ts).
  await app.register(connectionDraining);
  // CONNECTION_TIMEOUT_MS counts the client's silence, not the service's work (idle-connections.ts).
  await app.register(idleConnections);
  // REQUEST_TIMEOUT_MS, and IMPORT_MIN_RATE instead for an import's long upload (request-deadlines.ts).
  await app.register(requestDeadlines, {
    requestTimeoutMs: config.limits.requestTimeoutMs,
    minUploadBytesPerSecond: config.importMinBytesPerSecond,
  });
  // An answer sent before the body has all arrived reaches a client still sending it (lingering-close.ts).
  await app.register(lingeringClose, config.limits);

  // The store opens before anything connects elsewhere (rate limiting may use Redis): a bad DATABASE_URL fails at once.
  await app.register(clusterPlugin, { worker: dependencies.worker });
  await app.register(requestLog);
  await app.register(metricsPlugin);
  await app.register(storePlugin, { store: dependencies.store });
  await app.register(jsonBodies, { bodyLimit: config.bodyLimitBytes });
  await app.register(errorRecords, { bodyLimit: config.bodyLimitBytes });
  // Before every route: it adds its hook to each route as it is added.
  await app.register(responseCompression);

  // After the parser and error handler (CORS's OPTIONS route uses both), before other routes: CORS so even
  // a 429 is readable by an allowed origin; the OpenAPI document reads every route added after it.
  await app.register(corsPolicy, { origins: config.limits.corsOrigins });
  await app.register(rateLimiting, config.limits);
  await app.register(openApiDocument);

  // Conventions each route gets from its schema as it is added (scope, query string, methods for 405s).
  await app.register(authPlugin);
  await app.register(queryStringRules);
  await app.register(collectRoutes);
  // Before the plant routes: they inherit its hook that nudges delivery after each write.
  await app.register(webhookDispatcher);

  await app.register(plantsPlugin);
  await app.register(webhooksPlugin);
  await app.register(eventsPlugin);
  await app.register(tokensPlugin);
  await app.register(systemPlugin);
  await app.register(metricsRoutes);
  await app.register(answerOtherMethods);
  await app.register(docsPage);
  await app.register(consolePage);
}
