/**
 * Webhook backlog (pending deliveries, the oldest one's wait): how a dead receiver or stuck dispatcher shows
 * up early. Read from the webhook store's `backlog()` at scrape time; without one the gauges are not registered.
 */
import { Gauge, type Registry } from 'prom-client';

export interface WebhookBacklog {
  /** Deliveries not yet delivered and not given up on. */
  readonly pending: number;
  /** Age of the oldest of them; null when there are none. */
  readonly oldestPendingSeconds: number | null;
}

export interface WebhookBacklogSource {
  backlog(): Promise<WebhookBacklog>;
}

function backlogSource(store: object): WebhookBacklogSource | undefined {
  const webhooks = (store as { webhooks?: Partial<WebhookBacklogSource> }).webhooks;
  return typeof webhooks?.backlog === 'function' ? (webhooks as WebhookBacklogSource) : undefined;
}

export function registerWebhookBacklogMetrics(registry: Registry, store: object): void {
  const source = backlogSource(store);
  if (source === undefined) return;
  // One read per scrape serves both gauges: the first collect() reads, the second reuses it.
  let pendingRead: Promise<WebhookBacklog> | undefined;
  const read = () => (pendingRead ??= source.backlog().finally(() => setImmediate(() => (pendingRead = undefined))));
  new Gauge({
    name: 'plantstore_webhook_deliveries_pending',
    help: 'Webhook deliveries waiting to be sent (including ones waiting for a retry).',
    registers: [registry],
    async collect() {
      this.set((await read()).pending);
    },
  });
  new Gauge({
    name: 'plantstore_webhook_oldest_pending_seconds',
    help: 'How long the oldest pending webhook delivery has waited; 0 when none is pending.',
    registers: [registry],
    async collect() {
      this.set((await read()).oldestPendingSeconds ?? 0);
    },
  });
}
