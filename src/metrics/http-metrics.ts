/**
 * Counts every response and its latency by method, route template and status. The label is the template,
 * never the URL, so series stay bounded; series are kept in maps so a request allocates nothing.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { CounterSeries, HistogramSeries } from './series.js';
import type { ServiceMetrics } from './service-metrics.js';

export const UNMATCHED_ROUTE = '(unmatched)';

interface RequestSeries {
  readonly count: CounterSeries;
  readonly duration: HistogramSeries;
}

type ByStatus = Map<number, RequestSeries>;

export function registerHttpMetrics(app: FastifyInstance, metrics: ServiceMetrics): void {
  const byRoute = new Map<string, Map<string, ByStatus>>();

  const seriesFor = (method: string, route: string, status: number): RequestSeries => {
    let byMethod = byRoute.get(route);
    if (byMethod === undefined) byRoute.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (series === undefined) {
      const labels = { method, route, status_code: String(status) };
      series = { count: metrics.httpRequests.series(labels), duration: metrics.httpDuration.series(labels) };
      byStatus.set(status, series);
    }
    return series;
  };

  // A callback hook, not an async one: no promise per request.
  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const series = seriesFor(request.method, request.routeOptions.url ?? UNMATCHED_ROUTE, reply.statusCode);
    series.count.inc();
    series.duration.observe(reply.elapsedTime / 1000);
    done();
  });
}
