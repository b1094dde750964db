/**
 * The composition root: builds the whole HTTP app from a config, without listening
 * (tests drive it with inject or listen on port 0). Plugins are registered in
 * layers, as fastify/demo does, each a folder: the wire (src/http), the app's own
 * foundations (src/plugins/app), external plugins (src/plugins/external), route
 * conventions, then the features (their own folders), each a plugin that declares
 * what it depends on. The order follows the dependencies: the store opens before
 * rate limiting may connect to Redis.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { Config } from './config/index.js';
import { docsPage } from './docs/routes.js';
import { eventsPlugin } from './events/plugin.js';
import { connectionDraining } from './http/connection-draining.js';
import { errorRecords } from './http/error-handler.js';
import { idleConnections } from './http/idle-connections.js';
import { jsonBodies } from './http/json-body.js';
import { lingeringClose } from './http/lingering-close.js';
import { answerOtherMethods, collectRoutes } from './http/method-not-allowed.js';
import { protocolEdges } from './http/node-protocol.js';
import { queryStringRules } from './http/query-string.js';
import { serializerFactory } from './http/serialization.js';
import { serverOptions } from './http/server-options.js';
import { validatorFactory } from './http/validation.js';
import { loggerOptions } from './logging.js';
import { metricsRoutes } from './metrics/endpoint.js';
import { plantsPlugin } from './plants/plugin.js';
import { metricsPlugin } from './plugins/app/metrics.js';
import { requestLog } from './plugins/app/request-log.js';
import { storePlugin } from './plugins/app/store.js';
import { corsPolicy } from './plugins/external/cors.js';
import { securityHeaders } from './plugins/external/helmet.js';
import { rateLimiting } from './plugins/external/rate-limit.js';
import { openApiDocument } from './plugins/external/swagger.js';
import type { Store } from './store/types.js';
import { systemPlugin } from './system/routes.js';
import { authPlugin } from './tokens/auth.js';
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
}

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export async function buildApp(config: Config, dependencies: AppDependencies = {}): Promise<FastifyInstance> {
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
  // Host, duplicate headers, pipelining order, Expect, CONNECT (node-protocol.ts):
  // before every hook that acts on a request.
  await app.register(protocolEdges, { continueFromRoutes: true });
  // Closing waits only for requests being answered (connection-draining.ts).
  await app.register(connectionDraining);
  // CONNECTION_TIMEOUT_MS counts the client's silence, not the service's work (idle-connections.ts).
  await app.register(idleConnections);
  // An answer sent before the body has all arrived reaches a client still sending it (lingering-close.ts).
  await app.register(lingeringClose, config.limits);

  // The app's foundations (src/plugins/app): the log line, metrics (the store is timed at its boundary),
  // then the store, opened before anything else connects anywhere (rate limiting may connect to Redis),
  // so a bad DATABASE_URL fails the start at once.
  await app.register(requestLog);
  await app.register(metricsPlugin);
  await app.register(storePlugin, { store: dependencies.store });
  await app.register(jsonBodies, { bodyLimit: config.bodyLimitBytes });
  await app.register(errorRecords, { bodyLimit: config.bodyLimitBytes });

  // External plugins (src/plugins/external), after the parser and error handler (CORS adds an OPTIONS
  // route that must use both), before any other route: CORS (so even a 429 is readable by an allowed
  // origin), rate limiting, and the OpenAPI document, which reads every route added after it.
  await app.register(corsPolicy, { origins: config.limits.corsOrigins });
  await app.register(rateLimiting, config.limits);
  await app.register(openApiDocument);

  // Conventions each route gets from its schema as it is added: its scope checked
  // (security), its query string held to the rules (query-string.ts), its methods noted for 405s.
  await app.register(authPlugin);
  await app.register(queryStringRules);
  await app.register(collectRoutes);
  // Delivers webhook events in the background, from the outbox the stores write;
  // nudged after each plant write by a hook the plant routes inherit (they depend on it).
  await app.register(webhookDispatcher);

  // The features.
  await app.register(plantsPlugin);
  await app.register(webhooksPlugin);
  await app.register(eventsPlugin);
  await app.register(systemPlugin);
  await app.register(metricsRoutes);
  await app.register(answerOtherMethods);
  await app.register(docsPage);
}
