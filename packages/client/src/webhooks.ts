/**
 * Webhook subscriptions through the typed client: subscribe, read, change (conditionally, like a plant),
 * disable and enable, the delivery log, retries and recoveries. Admin scope.
 */
import type { Client } from 'openapi-fetch';
import type { PlantStoreError } from './errors.js';
import type { components, operations, paths } from './openapi-types.js';

export type WebhookSubscription = components['schemas']['WebhookSubscription'];
export type CreatedWebhookSubscription = components['schemas']['CreatedWebhookSubscription'];
export type NewWebhookSubscription = components['schemas']['NewWebhookSubscription'];
export type WebhookSubscriptionChange = components['schemas']['WebhookSubscriptionPatch'];
export type WebhookDelivery = components['schemas']['WebhookDelivery'];
export type WebhookRecovery = components['schemas']['WebhookRecovery'];
export type WebhookTestOutcome = operations['testWebhook']['responses'][200]['content']['application/json'];
export type WebhookEventTypes = operations['listWebhookEventTypes']['responses'][200]['content']['application/json'];

export type WebhookChangeOutcome =
  /** The subscription as it is now, with its ETag (a change that changed nothing keeps it). */
  | { readonly kind: 'updated'; readonly webhook: WebhookSubscription; readonly etag: string }
  /** HTTP 412: the subscription is not at the version `ifMatch` named (or is gone); nothing changed. */
  | { readonly kind: 'precondition-failed'; readonly error: PlantStoreError };

export interface WebhookOperations {
  createWebhook(subscription: NewWebhookSubscription): Promise<CreatedWebhookSubscription>;
  listWebhooks(): Promise<WebhookSubscription[]>;
  /** The subscription with its ETag. */
  readWebhook(id: string): Promise<{ readonly webhook: WebhookSubscription; readonly etag: string }>;
  /** PATCH: merges `change` (url, description, eventTypes, tag, enabled...) into the subscription. */
  updateWebhook(
    id: string,
    change: WebhookSubscriptionChange,
    options?: { readonly ifMatch?: string },
  ): Promise<WebhookChangeOutcome>;
  deleteWebhook(id: string): Promise<void>;
  listWebhookDeliveries(
    id: string,
    options?: {
      readonly limit?: number;
      readonly status?: WebhookDelivery['status'];
      /** Only the delivery of this event (msg_...). */
      readonly eventId?: string;
      /** Only deliveries of events about this plant. */
      readonly plantId?: bigint;
    },
  ): Promise<WebhookDelivery[]>;
  retryWebhookDelivery(id: string, deliveryId: string): Promise<WebhookDelivery>;
  /** Starts (or finds, for the same window) the recovery of the window's failed deliveries. */
  recoverWebhook(id: string, window: { readonly since: string; readonly until?: string }): Promise<WebhookRecovery>;
  getWebhookRecovery(id: string, recoveryId: string): Promise<WebhookRecovery>;
  /** Sends one signed webhook.test message now and answers how the receiver answered. */
  testWebhook(id: string): Promise<WebhookTestOutcome>;
  /** The event types, each with its description and the JSON Schema of its body. */
  listWebhookEventTypes(): Promise<WebhookEventTypes>;
}

interface Outcome {
  readonly data?: string;
  readonly error?: unknown;
  readonly response: Response;
}

/** The client's request helper: sends, throws on failures other than `expected` statuses. */
export type Send = (
  call: (signal: AbortSignal) => Promise<Outcome>,
  expected?: readonly number[],
) => Promise<{ text: string | undefined; response: Response; error?: PlantStoreError }>;

export function webhookOperations(
  api: Client<paths>,
  send: Send,
  decode: <T>(text: string | undefined) => T,
): WebhookOperations {
  const etagOf = (response: Response) => response.headers.get('etag') ?? '';
  return {
    async createWebhook(body) {
      const { text } = await send((signal) => api.POST('/webhooks', { body, parseAs: 'text', signal }));
      return decode<CreatedWebhookSubscription>(text);
    },
    async listWebhooks() {
      const { text } = await send((signal) => api.GET('/webhooks', { parseAs: 'text', signal }));
      return decode<WebhookSubscription[]>(text);
    },
    async readWebhook(id) {
      const { text, response } = await send((signal) =>
        api.GET('/webhooks/{id}', { params: { path: { id } }, parseAs: 'text', signal }),
      );
      return { webhook: decode<WebhookSubscription>(text), etag: etagOf(response) };
    },
    async updateWebhook(id, change, options) {
      const header = options?.ifMatch === undefined ? {} : { 'if-match': options.ifMatch };
      const { text, response, error } = await send(
        (signal) =>
          api.PATCH('/webhooks/{id}', {
            params: { path: { id }, header },
            body: change,
            headers: { 'content-type': 'application/merge-patch+json' },
            parseAs: 'text',
            signal,
          }),
        [412],
      );
      return error === undefined
        ? { kind: 'updated', webhook: decode<WebhookSubscription>(text), etag: etagOf(response) }
        : { kind: 'precondition-failed', error };
    },
    async deleteWebhook(id) {
      await send((signal) => api.DELETE('/webhooks/{id}', { params: { path: { id } }, parseAs: 'text', signal }));
    },
    async listWebhookDeliveries(id, options = {}) {
      const query = {
        ...(options.limit === undefined ? {} : { limit: options.limit }),
        ...(options.status === undefined ? {} : { status: options.status }),
        ...(options.eventId === undefined ? {} : { eventId: options.eventId }),
        ...(options.plantId === undefined ? {} : { plantId: options.plantId }),
      };
      const { text } = await send((signal) =>
        api.GET('/webhooks/{id}/deliveries', { params: { path: { id }, query }, parseAs: 'text', signal }),
      );
      return decode<WebhookDelivery[]>(text);
    },
    async retryWebhookDelivery(id, deliveryId) {
      const { text } = await send((signal) =>
        api.POST('/webhooks/{id}/deliveries/{deliveryId}/retry', {
          params: { path: { id, deliveryId } },
          parseAs: 'text',
          signal,
        }),
      );
      return decode<WebhookDelivery>(text);
    },
    async recoverWebhook(id, window) {
      const body = { since: window.since, ...(window.until === undefined ? {} : { until: window.until }) };
      const { text } = await send((signal) =>
        api.POST('/webhooks/{id}/recover', { params: { path: { id } }, body, parseAs: 'text', signal }),
      );
      return decode<WebhookRecovery>(text);
    },
    async getWebhookRecovery(id, recoveryId) {
      const { text } = await send((signal) =>
        api.GET('/webhooks/{id}/recoveries/{recoveryId}', {
          params: { path: { id, recoveryId } },
          parseAs: 'text',
          signal,
        }),
      );
      return decode<WebhookRecovery>(text);
    },
    async testWebhook(id) {
      const { text } = await send((signal) =>
        api.POST('/webhooks/{id}/test', { params: { path: { id } }, parseAs: 'text', signal }),
      );
      return decode<WebhookTestOutcome>(text);
    },
    async listWebhookEventTypes() {
      const { text } = await send((signal) => api.GET('/webhooks/event-types', { parseAs: 'text', signal }));
      return decode<WebhookEventTypes>(text);
    },
  };
}
