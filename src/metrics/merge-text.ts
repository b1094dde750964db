/**
 * One scrape for a multi-worker instance: every worker's exposition text merged into one. Counters and
 * histograms are the instance's totals (their samples summed); gauges and summaries, which do not add up
 * (event-loop lag, a quantile), keep one sample per worker, labelled `worker`.
 */

interface Family {
  readonly header: string[];
  type: string;
  /** Sample key (name and labels) to its value, in the order first seen. */
  readonly samples: Map<string, number>;
}

const SUMMED = new Set(['counter', 'histogram']);

function withWorker(key: string, worker: string): string {
  const label = `worker="${worker}"`;
  if (!key.endsWith('}')) return `${key}{${label}}`;
  return key.endsWith('{}') ? `${key.slice(0, -1)}${label}}` : `${key.slice(0, -1)},${label}}`;
}

function numberText(value: number): string {
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

/** `texts`: each worker's id and its text, as its registry rendered it. */
export function mergeExpositions(texts: readonly { readonly worker: string; readonly text: string }[]): string {
  const families = new Map<string, Family>();
  for (const { worker, text } of texts) {
    let family: Family | undefined;
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const comment = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
      if (comment !== null) {
        const name = comment[2] as string;
        family = families.get(name);
        if (family === undefined) {
          family = { header: [], type: 'untyped', samples: new Map() };
          families.set(name, family);
        }
        if (comment[1] === 'TYPE') family.type = comment[3] ?? 'untyped';
        if (!family.header.some((kept) => kept.startsWith(`# ${comment[1]} `))) family.header.push(line);
        continue;
      }
      if (line.startsWith('#') || family === undefined) continue;
      const space = line.lastIndexOf(' ');
      const key = SUMMED.has(family.type) ? line.slice(0, space) : withWorker(line.slice(0, space), worker);
      const value = Number(line.slice(space + 1).replace('+Inf', 'Infinity'));
      family.samples.set(key, (family.samples.get(key) ?? 0) + value);
    }
  }
  let merged = '';
  for (const family of families.values()) {
    merged += `${family.header.join('\n')}\n`;
    for (const [key, value] of family.samples) merged += `${key} ${numberText(value)}\n`;
  }
  return merged;
}
