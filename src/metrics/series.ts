/**
 * Counters and histograms for the hot path, exposed through prom-client.
 *
 * prom-client's own label children re-validate and re-hash their labels and
 * allocate on every observation, which a request of tens of microseconds feels
 * (bench/README.md, "Node.js 24"). Here a
 * series is created once per label set and updating it only adds numbers into a
 * typed array. prom-client still does the exposition: these collectors implement
 * the `get()` its registry formats.
 */
import type { Registry } from 'prom-client';

type Labels = Readonly<Record<string, string>>;

interface MetricSample {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

type MetricType = 'counter' | 'histogram';

interface MetricSnapshot {
  name: string;
  help: string;
  type: MetricType;
  aggregator: 'sum';
  values: MetricSample[];
}

interface Collector {
  readonly name: string;
  readonly help: string;
  readonly type: MetricType;
  readonly aggregator: 'sum';
  get(): Promise<MetricSnapshot>;
}

function register(registry: Registry, collector: Collector): void {
  // The registry only needs name, help, type and get(); its TypeScript signature
  // names prom-client's own classes, hence this one cast.
  registry.registerMetric(collector as unknown as Parameters<Registry['registerMetric']>[0]);
}

export class CounterSeries {
  value = 0;
  constructor(readonly labels: Labels) {}
  inc(by = 1): void {
    this.value += by;
  }
}

export class LabelledCounter implements Collector {
  readonly type: MetricType = 'counter';
  readonly aggregator = 'sum' as const;
  private readonly all: CounterSeries[] = [];

  constructor(registry: Registry, readonly name: string, readonly help: string) {
    register(registry, this);
  }

  /** Creates a series; call once per label set and keep it. */
  series(labels: Labels): CounterSeries {
    const series = new CounterSeries(labels);
    this.all.push(series);
    return series;
  }

  async get(): Promise<MetricSnapshot> {
    const values = this.all.map((s) => ({ value: s.value, labels: { ...s.labels } }));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

export class HistogramSeries {
  /** counts[i]: observations <= bounds[i] and > bounds[i-1]; the last slot is +Inf. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(readonly labels: Labels, private readonly bounds: Float64Array) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const { bounds } = this;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    (this.counts[i] as number)++;
    this.sum += value;
    this.count++;
  }
}

export class LabelledHistogram implements Collector {
  readonly type: MetricType = 'histogram';
  readonly aggregator = 'sum' as const;
  private readonly all: HistogramSeries[] = [];
  private readonly bounds: Float64Array;

  constructor(registry: Registry, readonly name: string, readonly help: string, buckets: readonly number[]) {
    this.bounds = Float64Array.from([...buckets].sort((a, b) => a - b));
    register(registry, this);
  }

  /** Creates a series; call once per label set and keep it. */
  series(labels: Labels): HistogramSeries {
    const series = new HistogramSeries(labels, this.bounds);
    this.all.push(series);
    return series;
  }

  async get(): Promise<MetricSnapshot> {
    const values: MetricSample[] = [];
    for (const series of this.all) {
      let cumulative = 0;
      for (let i = 0; i <= this.bounds.length; i++) {
        cumulative += series.counts[i] as number;
        const le = i < this.bounds.length ? (this.bounds[i] as number) : '+Inf';
        values.push({ metricName: `${this.name}_bucket`, value: cumulative, labels: { ...series.labels, le } });
      }
      values.push({ metricName: `${this.name}_sum`, value: series.sum, labels: { ...series.labels } });
      values.push({ metricName: `${this.name}_count`, value: series.count, labels: { ...series.labels } });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}
