/**
 * A prom-client Counter whose per-request increments are plain additions.
 *
 * A label child of prom-client's Counter validates and hashes its labels on every
 * inc(). Here each label set gets a Tally, a number the hot path bumps, and the
 * Counter catches up when Prometheus scrapes: its collect() adds what each tally
 * grew since the last scrape (as batches.ts does with the store's own counts).
 */
import { Counter, type Registry } from 'prom-client';

export type Labels<L extends string> = Readonly<Record<L, string>>;

export class Tally<L extends string> {
  count = 0;
  reported = 0;
  constructor(readonly labels: Labels<L>) {}

  inc(): void {
    this.count++;
  }
}

/** Registers the counter; the returned function creates a label set's tally (once per label set: keep it). */
export function talliedCounter<L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[]): (labels: Labels<L>) => Tally<L> {
  const tallies: Tally<L>[] = [];
  new Counter({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      for (const tally of tallies) {
        this.inc(tally.labels, tally.count - tally.reported); // inc(0) makes a new tally's series show from its first scrape
        tally.reported = tally.count;
      }
    },
  });
  return (labels) => {
    const tally = new Tally(labels);
    tallies.push(tally);
    return tally;
  };
}
