/** @fastify/swagger, set up from the config: it reads every route added after it into the OpenAPI document. */
import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { openApiOptions } from '../../docs/openapi.js';

export const openApiDocument = fp(
  async (app: FastifyInstance) => {
    await app.register(swagger, openApiOptions(app.config));
  },
  { name: 'openapi-document', decorators: { fastify: ['config'] } },
);
