/**
 * 405 with Allow for a documented path with an unknown method (Fastify answers 404): `collectRoutes` notes the
 * documented routes as they are added, so it registers before them; `answerOtherMethods` adds the 405 routes after.
 */
import type { FastifyInstance, FastifySchema } from 'fastify';
import fp from 'fastify-plugin';
import { failure } from './errors.js';
import { ACCEPT_PATCH } from './json-body.js';

export interface DocumentedRoute {
  readonly method: string;
  /** In Fastify's form: `/plants/:id`. */
  readonly url: string;
  readonly schema: FastifySchema;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every documented route, in the order they were added. */
    documentedRoutes: DocumentedRoute[];
  }
}

/** The order methods are listed in an Allow header. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

export const collectRoutes = fp(
  async (app: FastifyInstance) => {
    app.decorate('documentedRoutes', []);
    app.addHook('onRoute', (route) => {
      if (route.schema?.operationId === undefined) return;
      for (const method of [route.method].flat())
        app.documentedRoutes.push({ method, url: route.url, schema: route.schema });
    });
  },
  { name: 'collect-routes' },
);

export const answerOtherMethods = fp(
  async (app: FastifyInstance) => {
    const methodsByUrl = new Map<string, Set<string>>();
    for (const { method, url } of app.documentedRoutes) {
      const methods = methodsByUrl.get(url) ?? new Set<string>();
      methods.add(method);
      if (method === 'GET') methods.add('HEAD');
      methodsByUrl.set(url, methods);
    }
    for (const [url, allowed] of methodsByUrl) {
      const allow = METHODS.filter((m) => allowed.has(m)).join(', ');
      const path = url.replace(/:([A-Za-z]+)/g, '{$1}');
      // Where PATCH is allowed, each answer naming the path's methods (OPTIONS's among them) names its formats too.
      const headers: Record<string, string> = allowed.has('PATCH')
        ? { allow, 'accept-patch': ACCEPT_PATCH }
        : { allow };
      app.route({
        method: app.supportedMethods.filter((m) => !allowed.has(m)),
        url,
        // Do not parse (or refuse) a body we are going to reject anyway.
        onRequest: async (request) => {
          throw failure('METHOD_NOT_ALLOWED', [request.method, path, allow], headers);
        },
        handler: async () => undefined,
      });
    }
  },
  { name: 'answer-other-methods', dependencies: ['collect-routes'] },
);
