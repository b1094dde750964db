/**
 * Operations about the service itself; no token needed.
 * /healthz is liveness (the process answers); /readyz is readiness (the store answers).
 */
import type { FastifyReply } from 'fastify';
import type { Operation } from '../http/operation.js';

const Status = {
  type: 'object',
  required: ['status'],
  properties: { status: { type: 'string', enum: ['ok'] } },
} as const;

export const health: Operation = {
  operationId: 'health',
  method: 'GET',
  path: '/healthz',
  summary: 'Liveness',
  description: 'Answers 200 while the process is running, whatever the state of the store.',
  tags: ['service'],
  scope: null,
  success: { status: 200, description: 'The process is alive.', schema: Status, example: { status: 'ok' } },
  errors: [],
  async handler() {
    return { status: 'ok' };
  },
};

export const readiness: Operation = {
  operationId: 'readiness',
  method: 'GET',
  path: '/readyz',
  summary: 'Readiness',
  description: 'Answers 200 when the store is reachable, 503 (with an Error record) while it is not.',
  tags: ['service'],
  scope: null,
  success: { status: 200, description: 'The store answers.', schema: Status, example: { status: 'ok' } },
  errors: ['STORE_UNAVAILABLE'],
  async handler(request) {
    await request.server.store.ping();
    return { status: 'ok' };
  },
};

export function openApiOperation(getDocument: () => unknown): Operation {
  let serialized: string | undefined;
  return {
    operationId: 'openapi',
    method: 'GET',
    path: '/openapi.json',
    summary: 'This OpenAPI document',
    description: 'The OpenAPI 3.1 description of the whole service.',
    tags: ['service'],
    scope: null,
    success: { status: 200, description: 'The OpenAPI document.', schema: { type: 'object' }, contentType: 'application/json' },
    errors: [],
    async handler(_request, reply: FastifyReply) {
      serialized ??= JSON.stringify(getDocument());
      return reply.type('application/json; charset=utf-8').send(serialized);
    },
  };
}
