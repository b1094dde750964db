/** Reading a few figures out of the Prometheus text /metrics answers: sums over labels, and a p99 from buckets. */

interface Sample {
  readonly name: string;
  readonly labels: string;
  readonly value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/;

export function samples(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = LINE.exec(line);
    if (match === null || line.startsWith('#')) continue;
    out.push({ name: match[1] ?? '', labels: match[2] ?? '', value: Number(match[3]) });
  }
  return out;
}

/** The sum of every series of `name`; undefined when the service has no such metric. */
export function total(all: readonly Sample[], name: string): number | undefined {
  const matching = all.filter((s) => s.name === name);
  return matching.length === 0 ? undefined : matching.reduce((sum, s) => sum + s.value, 0);
}

export function label(all: readonly Sample[], name: string, key: string): string | undefined {
  const series = all.find((s) => s.name === name);
  return series === undefined ? undefined : new RegExp(`${key}="([^"]*)"`).exec(series.labels)?.[1];
}

/** The upper bound of the bucket holding the q-quantile of a histogram, summed over its labels; in seconds. */
export function quantile(all: readonly Sample[], histogram: string, q: number): number | undefined {
  const byBound = new Map<number, number>();
  for (const s of all) {
    if (s.name !== `${histogram}_bucket`) continue;
    const le = /le="([^"]*)"/.exec(s.labels)?.[1];
    if (le === undefined) continue;
    const bound = le === '+Inf' ? Infinity : Number(le);
    byBound.set(bound, (byBound.get(bound) ?? 0) + s.value);
  }
  const bounds = [...byBound.keys()].sort((a, b) => a - b);
  const count = byBound.get(Infinity) ?? 0;
  if (count === 0) return undefined;
  return bounds.find((bound) => (byBound.get(bound) ?? 0) >= q * count);
}
