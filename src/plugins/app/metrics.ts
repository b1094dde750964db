/**
 * The service's metrics as a plugin: one registry per app, HTTP requests counted
 * and timed by route. Store calls are timed where the store plugin hands the
 * store to the app (store.ts); /metrics is served by src/metrics/endpoint.ts.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { registerBulkJobsGauge } from '../../metrics/activity.js';
import { registerHttpMetrics } from '../../metrics/http-metrics.js';
import { ServiceMetrics } from '../../metrics/service-metrics.js';
import { SERVICE_VERSION } from '../../system/version.js';

declare module 'fastify' {
  interface FastifyInstance {
    metrics: ServiceMetrics;
  }
}

export const metricsPlugin = fp(
  async (app: FastifyInstance) => {
    const metrics = new ServiceMetrics({
      storeKind: app.config.databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'postgres',
      version: SERVICE_VERSION,
    });
    app.decorate('metrics', metrics);
    registerHttpMetrics(app, metrics);
    registerBulkJobsGauge(app, metrics.registry);
    // The primary merges every worker's into one scrape (src/metrics/merge-text.ts).
    app.cluster?.primary.answer('metrics', () => metrics.render());
  },
  { name: 'metrics', dependencies: ['cluster'], decorators: { fastify: ['config'] } },
);
