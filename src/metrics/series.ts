/**
 * The per-request series (HTTP requests, store calls), updated by adding into typed arrays. prom-client's
 * metrics re-validate and re-hash labels and allocate on every observation, so these write their own lines of
 * the text format, appended to what prom-client's registry renders (bench/README.md, "Metrics").
 */
type Labels = Readonly<Record<string, string>>;

/** A label value or HELP text, escaped as the text format requires. */
function escaped(text: string, forLabel: boolean): string {
  const backslashAndNewline = text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
  return forLabel ? backslashAndNewline.replace(/"/g, '\\"') : backslashAndNewline;
}

function labelText(labels: Labels, extra?: string): string {
  const pairs = Object.entries(labels).map(([name, value]) => `${name}="${escaped(value, true)}"`);
  if (extra !== undefined) pairs.push(extra);
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

/** How a number is written: +Inf, -Inf, NaN as the format spells them. */
function numberText(value: number): string {
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

abstract class Family<S> {
  protected readonly all: S[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly type: 'counter' | 'histogram',
  ) {}

  protected header(): string {
    return `# HELP ${this.name} ${escaped(this.help, false)}\n# TYPE ${this.name} ${this.type}\n`;
  }

  /** The family's lines of the text format; none while it has no series. */
  abstract render(): string;
}

export class CounterSeries {
  value = 0;
  constructor(readonly labels: Labels) {}
  inc(by = 1): void {
    this.value += by;
  }
}

export class LabelledCounter extends Family<CounterSeries> {
  constructor(name: string, help: string) {
    super(name, help, 'counter');
  }

  /** Creates a series; call once per label set and keep it. */
  series(labels: Labels): CounterSeries {
    const series = new CounterSeries(labels);
    this.all.push(series);
    return series;
  }

  render(): string {
    if (this.all.length === 0) return '';
    return this.header() + this.all.map((s) => `${this.name}${labelText(s.labels)} ${numberText(s.value)}\n`).join('');
  }
}

export class HistogramSeries {
  /** counts[i]: observations <= bounds[i] and > bounds[i-1]; the last slot is +Inf. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Labels,
    private readonly bounds: Float64Array,
  ) {
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

export class LabelledHistogram extends Family<HistogramSeries> {
  private readonly bounds: Float64Array;

  constructor(name: string, help: string, buckets: readonly number[]) {
    super(name, help, 'histogram');
    this.bounds = Float64Array.from([...buckets].sort((a, b) => a - b));
  }

  /** Creates a series; call once per label set and keep it. */
  series(labels: Labels): HistogramSeries {
    const series = new HistogramSeries(labels, this.bounds);
    this.all.push(series);
    return series;
  }

  render(): string {
    if (this.all.length === 0) return '';
    const lines: string[] = [];
    for (const series of this.all) {
      let cumulative = 0;
      for (let i = 0; i <= this.bounds.length; i++) {
        cumulative += series.counts[i] as number;
        const le = i < this.bounds.length ? numberText(this.bounds[i] as number) : '+Inf';
        lines.push(`${this.name}_bucket${labelText(series.labels, `le="${le}"`)} ${cumulative}\n`);
      }
      lines.push(`${this.name}_sum${labelText(series.labels)} ${numberText(series.sum)}\n`);
      lines.push(`${this.name}_count${labelText(series.labels)} ${series.count}\n`);
    }
    return this.header() + lines.join('');
  }
}
