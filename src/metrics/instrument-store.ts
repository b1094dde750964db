/**
 * Times every store call and counts its failures, by wrapping the store the app
 * uses. The wrapper is generic over the store's shape: every method of
 * `store.plants`, `store.tokens` and `store.webhooks` (including ones added
 * later) is timed, and anything else is passed through unchanged, so the store
 * interface can grow without touching this file.
 */
import { StoreUnavailableError } from '../http/errors.js';
import type { Store } from '../store/types.js';
import type { CounterSeries, HistogramSeries } from './series.js';
import type { ServiceMetrics } from './service-metrics.js';

type Method = (...args: unknown[]) => unknown;

/** Methods timed on the top-level store; the rest (close, migrate, poolStats...) pass through. */
const TIMED_STORE_METHODS = new Set(['ping']);
/** Nested stores whose every method is timed, when the store has them. */
const TIMED_FAMILIES = ['plants', 'tokens', 'webhooks'] as const;

interface OperationSeries {
  readonly duration: HistogramSeries;
  readonly unavailable: CounterSeries;
  readonly other: CounterSeries;
}

function propertyNames(target: object): string[] {
  const names = new Set<string>();
  for (let o: object | null = target; o !== null && o !== Object.prototype; o = Object.getPrototypeOf(o) as object | null) {
    for (const name of Object.getOwnPropertyNames(o)) if (name !== 'constructor') names.add(name);
  }
  return [...names];
}

/**
 * Series are created on a method's first call, so helpers a store class has but
 * the app never calls through the interface do not show up as empty series.
 */
function timed(target: object, method: Method, createSeries: () => OperationSeries): Method {
  let created: OperationSeries | undefined;
  const fail = (series: OperationSeries, error: unknown, start: number) => {
    (error instanceof StoreUnavailableError ? series.unavailable : series.other).inc();
    series.duration.observe((performance.now() - start) / 1000);
  };
  return (...args) => {
    const series = (created ??= createSeries());
    const start = performance.now();
    let result: unknown;
    try {
      result = method.apply(target, args);
    } catch (error) {
      fail(series, error, start);
      throw error;
    }
    if (result instanceof Promise) {
      return result.then(
        (value: unknown) => {
          series.duration.observe((performance.now() - start) / 1000);
          return value;
        },
        (error: unknown) => {
          fail(series, error, start);
          throw error;
        },
      );
    }
    series.duration.observe((performance.now() - start) / 1000);
    return result;
  };
}

/**
 * A stand-in for `target`: methods named by `shouldTime` are timed, other methods
 * are bound to the target (so private fields keep working), other properties are
 * read through from the target on each access.
 */
function wrap<T extends object>(target: T, family: string, metrics: ServiceMetrics, shouldTime: (name: string) => boolean): T {
  const wrapper: Record<string, unknown> = {};
  const source = target as Record<string, unknown>;
  for (const name of propertyNames(target)) {
    const value = source[name];
    if (typeof value !== 'function') {
      Object.defineProperty(wrapper, name, { get: () => source[name], enumerable: true, configurable: true });
      continue;
    }
    const method = value as Method;
    if (!shouldTime(name)) {
      wrapper[name] = method.bind(target);
      continue;
    }
    const operation = `${family}.${name}`;
    wrapper[name] = timed(target, method, () => ({
      duration: metrics.storeDuration.series({ operation }),
      unavailable: metrics.storeErrors.series({ operation, kind: 'unavailable' }),
      other: metrics.storeErrors.series({ operation, kind: 'other' }),
    }));
  }
  return wrapper as T;
}

export function instrumentStore(store: Store, metrics: ServiceMetrics): Store {
  const instrumented = wrap(store, 'store', metrics, (name) => TIMED_STORE_METHODS.has(name)) as Store & Record<string, unknown>;
  for (const family of TIMED_FAMILIES) {
    const nested = (store as unknown as Record<string, unknown>)[family];
    if (nested === null || typeof nested !== 'object') continue;
    // Own data properties replace the pass-through getters: the hot path reads them on every request.
    Object.defineProperty(instrumented, family, { value: wrap(nested, family, metrics, () => true), enumerable: true });
  }
  return instrumented;
}
