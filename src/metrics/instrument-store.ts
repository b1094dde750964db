/**
 * Times and counts failures of every store call at the store's boundary. Each wrapper implements its store
 * interface, so a method added there does not compile until it is timed here too.
 */
import { StoreUnavailableError } from '../store/errors.js';
import type { PlantStore, Store, TokenStore, WebhookStore } from '../store/types.js';
import type { CounterSeries, HistogramSeries, LabelledCounter, LabelledHistogram } from './series.js';
import type { ServiceMetrics } from './service-metrics.js';

type Call<T> = () => Promise<T>;
type Timed = <T>(call: Call<T>) => Promise<T>;

interface OperationSeries {
  readonly duration: HistogramSeries;
  readonly unavailable: CounterSeries;
  readonly other: CounterSeries;
}

/**
 * The timer of one operation. Its series are made on its first call (a method the
 * app never calls shows no empty series), then kept.
 */
function timer(duration: LabelledHistogram, errors: LabelledCounter, operation: string): Timed {
  let series: OperationSeries | undefined;
  return <T>(call: Call<T>): Promise<T> => {
    const s = (series ??= {
      duration: duration.series({ operation }),
      unavailable: errors.series({ operation, kind: 'unavailable' }),
      other: errors.series({ operation, kind: 'other' }),
    });
    const start = performance.now();
    const done = () => s.duration.observe((performance.now() - start) / 1000);
    const failed = (error: unknown): never => {
      (error instanceof StoreUnavailableError ? s.unavailable : s.other).inc();
      done();
      throw error;
    };
    let result: Promise<T>;
    try {
      result = call();
    } catch (error) {
      return failed(error);
    }
    return result.then((value) => {
      done();
      return value;
    }, failed);
  };
}

/** One timer per method of a store part, named `family.method`. */
function timers<K extends string>(metrics: ServiceMetrics, family: string, methods: readonly K[]): Record<K, Timed> {
  return Object.fromEntries(
    methods.map((m) => [m, timer(metrics.storeDuration, metrics.storeErrors, `${family}.${m}`)]),
  ) as Record<K, Timed>;
}

class TimedPlantStore implements PlantStore {
  private readonly t;
  constructor(
    private readonly inner: PlantStore,
    metrics: ServiceMetrics,
  ) {
    this.t = timers(metrics, 'plants', [
      'createPlant',
      'getPlant',
      'listPlantsPage',
      'countPlants',
      'updatePlant',
      'deletePlant',
    ] as const);
  }
  createPlant(...a: Parameters<PlantStore['createPlant']>) {
    return this.t.createPlant(() => this.inner.createPlant(...a));
  }
  getPlant(...a: Parameters<PlantStore['getPlant']>) {
    return this.t.getPlant(() => this.inner.getPlant(...a));
  }
  listPlantsPage(...a: Parameters<PlantStore['listPlantsPage']>) {
    return this.t.listPlantsPage(() => this.inner.listPlantsPage(...a));
  }
  countPlants(...a: Parameters<PlantStore['countPlants']>) {
    return this.t.countPlants(() => this.inner.countPlants(...a));
  }
  pageCursorSecret() {
    return this.inner.pageCursorSecret();
  }
  updatePlant(...a: Parameters<PlantStore['updatePlant']>) {
    return this.t.updatePlant(() => this.inner.updatePlant(...a));
  }
  deletePlant(...a: Parameters<PlantStore['deletePlant']>) {
    return this.t.deletePlant(() => this.inner.deletePlant(...a));
  }
  // Timed as a whole by the import and export routes' request durations: a per-call timer would mix their chunks with
  // requests.
  beginImport() {
    return this.inner.beginImport();
  }
  exportPlants(...a: Parameters<PlantStore['exportPlants']>) {
    return this.inner.exportPlants(...a);
  }
}

class TimedTokenStore implements TokenStore {
  private readonly t;
  constructor(
    private readonly inner: TokenStore,
    metrics: ServiceMetrics,
  ) {
    this.t = timers(metrics, 'tokens', [
      'insertToken',
      'findTokenBySecretHash',
      'listTokens',
      'revokeToken',
      'recordTokenUse',
      'countTokens',
    ] as const);
  }
  insertToken(...a: Parameters<TokenStore['insertToken']>) {
    return this.t.insertToken(() => this.inner.insertToken(...a));
  }
  findTokenBySecretHash(...a: Parameters<TokenStore['findTokenBySecretHash']>) {
    return this.t.findTokenBySecretHash(() => this.inner.findTokenBySecretHash(...a));
  }
  listTokens() {
    return this.t.listTokens(() => this.inner.listTokens());
  }
  revokeToken(...a: Parameters<TokenStore['revokeToken']>) {
    return this.t.revokeToken(() => this.inner.revokeToken(...a));
  }
  recordTokenUse(...a: Parameters<TokenStore['recordTokenUse']>) {
    return this.t.recordTokenUse(() => this.inner.recordTokenUse(...a));
  }
  countTokens() {
    return this.t.countTokens(() => this.inner.countTokens());
  }
}

class TimedWebhookStore implements WebhookStore {
  private readonly t;
  constructor(
    private readonly inner: WebhookStore,
    metrics: ServiceMetrics,
  ) {
    this.t = timers(metrics, 'webhooks', [
      'insertSubscription',
      'listSubscriptions',
      'getSubscription',
      'rotateSecret',
      'updateSubscription',
      'disableFailingSubscription',
      'deleteSubscription',
      'listDeliveries',
      'getDelivery',
      'startRecovery',
      'getRecovery',
      'staleRecoveries',
      'signingKeys',
      'recoverBatch',
      'hasDueDeliveries',
      'backlog',
      'claimDueDeliveries',
      'recordAttempt',
      'retryDelivery',
      'pruneFinishedEvents',
    ] as const);
  }
  insertSubscription(...a: Parameters<WebhookStore['insertSubscription']>) {
    return this.t.insertSubscription(() => this.inner.insertSubscription(...a));
  }
  listSubscriptions() {
    return this.t.listSubscriptions(() => this.inner.listSubscriptions());
  }
  getSubscription(...a: Parameters<WebhookStore['getSubscription']>) {
    return this.t.getSubscription(() => this.inner.getSubscription(...a));
  }
  rotateSecret(...a: Parameters<WebhookStore['rotateSecret']>) {
    return this.t.rotateSecret(() => this.inner.rotateSecret(...a));
  }
  updateSubscription(...a: Parameters<WebhookStore['updateSubscription']>) {
    return this.t.updateSubscription(() => this.inner.updateSubscription(...a));
  }
  disableFailingSubscription(...a: Parameters<WebhookStore['disableFailingSubscription']>) {
    return this.t.disableFailingSubscription(() => this.inner.disableFailingSubscription(...a));
  }
  deleteSubscription(...a: Parameters<WebhookStore['deleteSubscription']>) {
    return this.t.deleteSubscription(() => this.inner.deleteSubscription(...a));
  }
  listDeliveries(...a: Parameters<WebhookStore['listDeliveries']>) {
    return this.t.listDeliveries(() => this.inner.listDeliveries(...a));
  }
  startRecovery(...a: Parameters<WebhookStore['startRecovery']>) {
    return this.t.startRecovery(() => this.inner.startRecovery(...a));
  }
  signingKeys(...a: Parameters<WebhookStore['signingKeys']>) {
    return this.t.signingKeys(() => this.inner.signingKeys(...a));
  }
  getRecovery(...a: Parameters<WebhookStore['getRecovery']>) {
    return this.t.getRecovery(() => this.inner.getRecovery(...a));
  }
  staleRecoveries(...a: Parameters<WebhookStore['staleRecoveries']>) {
    return this.t.staleRecoveries(() => this.inner.staleRecoveries(...a));
  }
  recoverBatch(...a: Parameters<WebhookStore['recoverBatch']>) {
    return this.t.recoverBatch(() => this.inner.recoverBatch(...a));
  }
  getDelivery(...a: Parameters<WebhookStore['getDelivery']>) {
    return this.t.getDelivery(() => this.inner.getDelivery(...a));
  }
  hasDueDeliveries(...a: Parameters<WebhookStore['hasDueDeliveries']>) {
    return this.t.hasDueDeliveries(() => this.inner.hasDueDeliveries(...a));
  }
  backlog(...a: Parameters<WebhookStore['backlog']>) {
    return this.t.backlog(() => this.inner.backlog(...a));
  }
  claimDueDeliveries(...a: Parameters<WebhookStore['claimDueDeliveries']>) {
    return this.t.claimDueDeliveries(() => this.inner.claimDueDeliveries(...a));
  }
  recordAttempt(...a: Parameters<WebhookStore['recordAttempt']>) {
    return this.t.recordAttempt(() => this.inner.recordAttempt(...a));
  }
  retryDelivery(...a: Parameters<WebhookStore['retryDelivery']>) {
    return this.t.retryDelivery(() => this.inner.retryDelivery(...a));
  }
  pruneFinishedEvents(...a: Parameters<WebhookStore['pruneFinishedEvents']>) {
    return this.t.pruneFinishedEvents(() => this.inner.pruneFinishedEvents(...a));
  }
}

/** The store the app uses: the same store, every call timed. */
export function instrumentStore(store: Store, metrics: ServiceMetrics): Store {
  const ping = timer(metrics.storeDuration, metrics.storeErrors, 'store.ping');
  return {
    kind: store.kind,
    plants: new TimedPlantStore(store.plants, metrics),
    tokens: new TimedTokenStore(store.tokens, metrics),
    webhooks: new TimedWebhookStore(store.webhooks, metrics),
    // Read by the streams' one tailer per instance (src/events/), not per request.
    changes: store.changes,
    migrate: () => store.migrate(),
    ping: () => ping(() => store.ping()),
    close: () => store.close(),
  };
}
