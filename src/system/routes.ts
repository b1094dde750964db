/**
 * Operations about the service itself; no token needed.
 * /healthz is liveness (the process answers); /readyz is readiness (the store
 * answers); /openapi.json describes the whole service.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { jsonText, type TypedRoutes } from '../http/type-provider.js';
import { addVary } from '../http/vary.js';
import { StoreUnavailableError } from '../store/errors.js';
import { frontDoorRoutes } from './front-door.js';
import { publicBaseUrl } from './public-origin.js';
import { SERVICE_VERSION } from './version.js';

const Status = {
  type: 'object',
  required: ['status'],
  properties: { status: { type: 'string', enum: ['ok'] } },
  examples: [{ status: 'ok' }],
} as const;

const Readiness = {
  type: 'object',
  required: ['status', 'version'],
  properties: {
    status: { type: 'string', enum: ['ok'] },
    version: {
      type: 'string',
      description: "The service's version (also in `plantstore --version` and `plantstore_info`).",
    },
  },
  examples: [{ status: 'ok', version: '1.0.0' }],
} as const;

const systemRoutes: TypedRoutes = async (app) => {
  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'health',
        summary: 'Liveness',
        description: 'Answers 200 while the process is running, whatever the state of the store.',
        tags: ['service'],
        security: [],
        response: { 200: { ...Status, description: 'The process is alive.' } },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'readiness',
        summary: 'Readiness',
        description: 'Answers 200 when the store is reachable, 503 (with an Error record) while it is not.',
        tags: ['service'],
        security: [],
        response: { 200: { ...Readiness, description: 'The store answers.' } },
      },
      config: { failures: ['STORE_UNAVAILABLE'] },
    },
    async () => {
      await app.store.ping();
      // In a multi-worker instance: every worker, and the primary's writer, must be ready too.
      const problem = await app.cluster?.primary.ask('readiness', null);
      if (typeof problem === 'string') throw new StoreUnavailableError(problem);
      return { status: 'ok' as const, version: SERVICE_VERSION };
    },
  );

  // The document without its opening brace: each answer starts it with the servers of the URL it was asked at.
  let documentRest: string | undefined;
  app.get(
    '/openapi.json',
    {
      schema: {
        operationId: 'openapi',
        summary: 'This OpenAPI document',
        description:
          'The OpenAPI 3.1 description of the whole service. Its `servers` is the URL this request reached the service at ' +
          '(`PUBLIC_URL` when the service is configured with one, as behind a proxy), so examples read full URLs.',
        tags: ['service'],
        security: [],
        response: { 200: jsonText('The OpenAPI document.', { type: 'object' }) },
      },
    },
    async (request, reply) => {
      documentRest ??= JSON.stringify(app.swagger()).slice(1);
      const base = publicBaseUrl(request, app.config.publicUrl);
      const servers = JSON.stringify([{ url: base ?? '/' }]);
      // With no PUBLIC_URL the document follows the Host it was asked with.
      if (app.config.publicUrl === undefined) void addVary(reply, 'Host');
      return reply.type('application/json; charset=utf-8').send(`{"servers":${servers},${documentRest}`);
    },
  );
};

export const systemPlugin = fp(
  async (app: FastifyInstance) => {
    await app.register(systemRoutes);
    await app.register(frontDoorRoutes);
    app.cluster?.primary.answer('ping', () =>
      app.store.ping().then(
        () => null,
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      ),
    );
  },
  { name: 'system', dependencies: ['cluster', 'store', '@fastify/swagger', 'query-string-rules', 'collect-routes'] },
);
