/**
 * The service's metrics as a plugin: one registry per app, HTTP requests counted
 * and timed by route. Store calls are timed where the store plugin hands the
 * store to the app (src/plugins/store.ts); /metrics is served by endpoint.ts.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { registerHttpMetrics } from './http-metrics.js';
import { ServiceMetrics } from './service-metrics.js';

declare module 'fastify' {
  interface FastifyInstance {
    metrics: ServiceMetrics;
  }
}

export const metricsPlugin = fp(async (app: FastifyInstance) => {
  const metrics = new ServiceMetrics({ storeKind: app.config.databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'postgres' });
  app.decorate('metrics', metrics);
  registerHttpMetrics(app, metrics);
}, { name: 'metrics', decorators: { fastify: ['config'] } });
