/**
 * The service's metrics, in one prom-client registry per app (so tests can build
 * many apps in one process). Names follow Prometheus conventions: a
 * `plantstore_` prefix, base units (seconds), `_total` for counters. The default
 * Node.js process metrics (CPU, memory, event-loop lag, GC) are included.
 */
import { collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { talliedCounter } from './tallied-counter.js';

/** Seconds. Fine at the low end: a create on a warm SQLite store takes well under a millisecond. */
export const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const REQUEST_LABELS = ['method', 'route', 'status_code'] as const;

export interface ServiceMetricsOptions {
  readonly storeKind: string;
}

export class ServiceMetrics {
  readonly registry = new Registry();
  // Registered in this order, which is the order of the exposition.
  readonly httpRequests = talliedCounter(this.registry, 'plantstore_http_requests_total', 'HTTP requests answered, by method, route template and status code.', REQUEST_LABELS);
  readonly httpDuration = new Histogram({
    name: 'plantstore_http_request_duration_seconds',
    help: 'Time from receiving a request to finishing its response, by method, route template and status code.',
    labelNames: REQUEST_LABELS,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly storeDuration = new Histogram({
    name: 'plantstore_store_operation_duration_seconds',
    help: 'Time each store call took (successful or not), by operation.',
    labelNames: ['operation'],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly storeErrors = talliedCounter(
    this.registry,
    'plantstore_store_errors_total',
    'Store calls that failed, by operation and kind (unavailable: the database could not serve it; other: anything else).',
    ['operation', 'kind'],
  );

  constructor(options: ServiceMetricsOptions) {
    const { registry } = this;
    const info = new Gauge({ name: 'plantstore_info', help: 'Always 1; the labels describe this instance.', labelNames: ['store'], registers: [registry] });
    info.labels(options.storeKind).set(1);
    collectDefaultMetrics({ register: registry });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The exposition text for a scrape. */
  render(): Promise<string> {
    return this.registry.metrics();
  }
}
