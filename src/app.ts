/**
 * The composition root: builds the whole HTTP app from a config and an open store,
 * without listening (tests drive it with inject or listen on port 0).
 */
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Config } from './config.js';
import { registerErrorHandlers } from './http/error-handler.js';
import { registerJsonBodyParser } from './http/json-body.js';
import { registerMethodNotAllowed } from './http/method-not-allowed.js';
import { buildOpenApiDocument } from './http/openapi.js';
import { registerOperation, type Operation } from './http/operation.js';
import { compileValidator } from './http/validation.js';
import { plantOperations } from './plants/routes.js';
import type { Store } from './store/types.js';
import { health, openApiOperation, readiness } from './system/routes.js';
import { TokenAuthenticator } from './tokens/authenticator.js';

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

function loggerOptions(config: Config, stream: NodeJS.WritableStream | undefined): FastifyServerOptions['logger'] {
  return {
    level: config.logLevel,
    // Defence in depth: no serializer here logs headers, but if one ever does,
    // credentials are still cut out.
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization'], censor: '[redacted]' },
    ...(stream === undefined ? {} : { stream }),
  };
}

export async function buildApp(config: Config, dependencies: AppDependencies): Promise<FastifyInstance> {
  const app = Fastify({
    logger: loggerOptions(config, dependencies.logStream),
    // Fastify's two lines per request are replaced by our one (onResponse below).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.bodyLimitBytes,
    requestIdHeader: false,
    // A well-formed X-Request-Id from a proxy is kept, so logs can be correlated.
    genReqId: (request) => {
      const sent = request.headers['x-request-id'];
      return typeof sent === 'string' && CLIENT_REQUEST_ID.test(sent) ? sent : randomUUID();
    },
  });

  app.decorate('config', config);
  app.decorate('store', dependencies.store);
  app.decorate('authenticator', new TokenAuthenticator(dependencies.store.tokens, {
    cacheTtlMs: config.tokenCacheTtlMs,
    onBackgroundError: (error) => app.log.warn({ err: error }, 'could not record token use'),
  }));

  // One log line per request, after the response, with its id.
  app.addHook('onRequest', async (request, reply) => {
    void reply.header('x-request-id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      { method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 100) / 100 },
      'request',
    );
  });

  app.setValidatorCompiler(({ schema, httpPart }) => compileValidator(schema, httpPart));
  registerJsonBodyParser(app, config.bodyLimitBytes);
  registerErrorHandlers(app, config.bodyLimitBytes);

  const operations: Operation[] = [...plantOperations, health, readiness];
  const openApi = openApiOperation(() => buildOpenApiDocument(operations, { bodyLimitBytes: config.bodyLimitBytes }));
  operations.push(openApi);
  for (const operation of operations) registerOperation(app, operation);
  registerMethodNotAllowed(app, operations);

  await app.ready();
  return app;
}
