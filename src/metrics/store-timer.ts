/**
 * Records store calls (timed-store.ts) in the service's metrics: each call's
 * duration, successful or not, and failures counted by kind: `unavailable` (the
 * database could not serve it) or `other`.
 */
import type { Histogram } from 'prom-client';
import { StoreUnavailableError } from '../http/errors.js';
import type { ServiceMetrics } from './service-metrics.js';
import type { Tally } from './tallied-counter.js';
import type { Timer } from './timed-store.js';

interface OperationSeries {
  readonly duration: Histogram.Internal<'operation'>;
  readonly unavailable: Tally<'operation' | 'kind'>;
  readonly other: Tally<'operation' | 'kind'>;
}

function operationSeries(metrics: ServiceMetrics, operation: string): OperationSeries {
  // zero(): the series shows from the first call on, not from its first completion.
  metrics.storeDuration.zero({ operation });
  return {
    duration: metrics.storeDuration.labels({ operation }),
    unavailable: metrics.storeErrors({ operation, kind: 'unavailable' }),
    other: metrics.storeErrors({ operation, kind: 'other' }),
  };
}

/** Counts the failure and times the call; returns the error for the caller to rethrow. */
function failure(series: OperationSeries, error: unknown, start: number): unknown {
  (error instanceof StoreUnavailableError ? series.unavailable : series.other).inc();
  series.duration.observe((performance.now() - start) / 1000);
  return error;
}

export function storeTimer(metrics: ServiceMetrics): Timer {
  return (operation, call) => {
    // Created on the first call, so operations the app never uses do not show as empty series.
    let created: OperationSeries | undefined;
    return (...args) => {
      const series = (created ??= operationSeries(metrics, operation));
      const start = performance.now();
      let result;
      try {
        result = call(...args);
      } catch (error) {
        throw failure(series, error, start);
      }
      return result.then(
        (value) => {
          series.duration.observe((performance.now() - start) / 1000);
          return value;
        },
        (error: unknown) => {
          throw failure(series, error, start);
        },
      );
    };
  };
}
