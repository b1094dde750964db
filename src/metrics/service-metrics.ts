/**
 * The service's metrics, one prom-client registry per app so tests can build many apps in one process.
 * Names follow Prometheus conventions (`plantstore_` prefix, base units, `_total` counters).
 */
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { LabelledCounter, LabelledHistogram } from './series.js';

/** Seconds. Fine at the low end: a create on a warm SQLite store takes well under a millisecond. */
export const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface ServiceMetricsOptions {
  readonly storeKind: string;
  /** The service's version (package.json), a label of plantstore_info. */
  readonly version: string;
}

export class ServiceMetrics {
  readonly registry = new Registry();
  readonly httpRequests: LabelledCounter;
  readonly httpDuration: LabelledHistogram;
  readonly storeDuration: LabelledHistogram;
  readonly storeErrors: LabelledCounter;

  constructor(options: ServiceMetricsOptions) {
    const { registry } = this;
    this.httpRequests = new LabelledCounter(
      'plantstore_http_requests_total',
      'HTTP requests answered, by method, route template and status code.',
    );
    this.httpDuration = new LabelledHistogram(
      'plantstore_http_request_duration_seconds',
      'Time from receiving a request to finishing its response, by method, route template and status code.',
      LATENCY_BUCKETS,
    );
    this.storeDuration = new LabelledHistogram(
      'plantstore_store_operation_duration_seconds',
      'Time each store call took (successful or not), by operation.',
      LATENCY_BUCKETS,
    );
    this.storeErrors = new LabelledCounter(
      'plantstore_store_errors_total',
      'Store calls that failed, by operation and kind (unavailable: the database could not serve it; other: anything else).',
    );
    const info = new Gauge({
      name: 'plantstore_info',
      help: 'Always 1; the labels describe this instance.',
      labelNames: ['store', 'version'],
      registers: [registry],
    });
    info.labels(options.storeKind, options.version).set(1);
    collectDefaultMetrics({ register: registry });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The exposition text for a scrape: prom-client's registry, then the per-request series (series.ts). */
  async render(): Promise<string> {
    const own = [this.httpRequests, this.httpDuration, this.storeDuration, this.storeErrors]
      .map((family) => family.render())
      .join('');
    return (await this.registry.metrics()) + own;
  }
}
