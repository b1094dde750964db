/**
 * Long-running work in progress, read at scrape time: open event streams, and imports and exports in
 * flight. Both hold resources for minutes (a connection, a reader thread, a snapshot), so a rise shows
 * before the limits (EVENTS_MAX_STREAMS_PER_TOKEN, BULK_MAX_PER_TOKEN) start refusing.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify';
import { Gauge, type Registry } from 'prom-client';

/** The bulk routes, by the `kind` label their requests are counted under. */
const BULK_ROUTES: Readonly<Record<string, string>> = { '/plants/import': 'import', '/plants/export': 'export' };

export function registerOpenStreamsGauge(registry: Registry, openStreams: () => number): void {
  new Gauge({
    name: 'plantstore_event_streams_open',
    help: 'Change streams (GET /events) open on this instance.',
    registers: [registry],
    collect() {
      this.set(openStreams());
    },
  });
}

/**
 * Counts the bulk routes' requests from their start to their connection's end, whatever ends them (a 200,
 * an error, the client going away): the hook is added to those two routes only, so no other request pays.
 */
export function registerBulkJobsGauge(app: FastifyInstance, registry: Registry): void {
  const inFlight = new Map<string, number>(Object.values(BULK_ROUTES).map((kind) => [kind, 0]));
  new Gauge({
    name: 'plantstore_bulk_jobs_in_flight',
    help: 'Imports and exports being received or sent on this instance, by kind (import or export).',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      for (const [kind, count] of inFlight) this.labels(kind).set(count);
    },
  });
  app.addHook('onRoute', (route: RouteOptions) => {
    const kind = BULK_ROUTES[route.url];
    if (kind === undefined || (route.method !== 'POST' && route.method !== 'GET')) return;
    const count = (_request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
      inFlight.set(kind, (inFlight.get(kind) ?? 0) + 1);
      // 'close' comes once for every response, finished or cut off.
      reply.raw.once('close', () => inFlight.set(kind, (inFlight.get(kind) ?? 1) - 1));
      done();
    };
    const existing = route.onRequest;
    route.onRequest = existing === undefined ? [count] : [count, ...(Array.isArray(existing) ? existing : [existing])];
  });
}
