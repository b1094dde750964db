/**
 * The per-request series render themselves in the Prometheus text format
 * (src/metrics/series.ts): HELP and TYPE once per family, cumulative buckets with
 * +Inf, sum and count, escaped label values, and nothing for a family with no series.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LabelledCounter, LabelledHistogram } from '../../src/metrics/series.js';

describe('per-request series, as Prometheus text', () => {
  it('a counter: HELP, TYPE, one line per series, label values escaped', () => {
    const counter = new LabelledCounter('x_total', 'Things.\nCounted \\ here.');
    assert.equal(counter.render(), '');
    counter.series({ route: '/a' }).inc(2);
    counter.series({ route: 'say "hi"\\\n' }).inc();
    assert.equal(
      counter.render(),
      [
        '# HELP x_total Things.\\nCounted \\\\ here.',
        '# TYPE x_total counter',
        'x_total{route="/a"} 2',
        'x_total{route="say \\"hi\\"\\\\\\n"} 1',
        '',
      ].join('\n'),
    );
  });

  it('a histogram: cumulative buckets in order, +Inf, sum and count', () => {
    const histogram = new LabelledHistogram('d_seconds', 'Durations.', [1, 0.5]);
    const series = histogram.series({ op: 'get' });
    for (const value of [0.2, 0.5, 0.7, 3]) series.observe(value);
    assert.equal(
      histogram.render(),
      [
        '# HELP d_seconds Durations.',
        '# TYPE d_seconds histogram',
        'd_seconds_bucket{op="get",le="0.5"} 2',
        'd_seconds_bucket{op="get",le="1"} 3',
        'd_seconds_bucket{op="get",le="+Inf"} 4',
        'd_seconds_sum{op="get"} 4.4',
        'd_seconds_count{op="get"} 4',
        '',
      ].join('\n'),
    );
  });
});
