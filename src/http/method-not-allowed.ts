/**
 * 405 for a known path with an unknown method. Fastify answers 404 there, so each
 * path gets explicit routes for the methods it lacks (every method Fastify routes,
 * TRACE and QUERY included), answering with an Allow header.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError, Errors } from './errors.js';
import { fastifyPath, type OperationSpec } from './operation.js';

/** The order methods are listed in an Allow header. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

export function registerMethodNotAllowed(app: FastifyInstance, operations: readonly OperationSpec[]): void {
  const methodsByPath = new Map<string, Set<string>>();
  for (const operation of operations) {
    const methods = methodsByPath.get(operation.path) ?? new Set<string>();
    methods.add(operation.method);
    if (operation.method === 'GET') methods.add('HEAD');
    methodsByPath.set(operation.path, methods);
  }
  for (const [path, allowed] of methodsByPath) {
    const allow = METHODS.filter((m) => allowed.has(m)).join(', ');
    const missing = app.supportedMethods.filter((m) => !allowed.has(m));
    app.route({
      method: missing,
      url: fastifyPath(path),
      // Do not parse (or refuse) a body we are going to reject anyway.
      onRequest: async (request) => {
        throw new ApiError(Errors.METHOD_NOT_ALLOWED, `${request.method} is not allowed on ${path}; allowed: ${allow}`, { allow });
      },
      handler: async () => undefined,
    });
  }
}
