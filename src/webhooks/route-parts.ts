/** Schema parts, JSON shapes and lookups the webhook routes share. */
import { isEventType, type EventType } from '../domain/events.js';
import { OPAQUE_ID } from '../domain/text-rules.js';
import type { FastifyRequest } from 'fastify';
import { failure } from '../http/errors.js';
import { checkWebhookUrlSyntax, MAX_WEBHOOK_URL_LENGTH, WebhookUrlError } from './url-policy.js';
import type {
  DeliveryAttempt as AttemptRecord,
  WebhookDelivery as DeliveryRecord,
  WebhookSubscription as SubscriptionRecord,
  WebhookStore,
} from '../store/types.js';

/** A subscription's ETag: its version, quoted (strong). */
/**
 * preValidation of a body with a webhook url: a url the service refuses gets INVALID_WEBHOOK_URL saying why, before
 * the schema's pattern (the same shape, stated for clients) could answer a vaguer INVALID_FIELD.
 */
export async function refuseMalformedUrl(request: FastifyRequest): Promise<void> {
  const body: unknown = request.body;
  if (typeof body !== 'object' || body === null || !('url' in body) || typeof body.url !== 'string') return;
  // Its length is the schema's to say (INVALID_FIELD), as for every other field.
  if (body.url.length === 0 || body.url.length > MAX_WEBHOOK_URL_LENGTH) return;
  try {
    checkWebhookUrlSyntax(body.url);
  } catch (error) {
    if (error instanceof WebhookUrlError) throw failure('INVALID_WEBHOOK_URL', [error.message]);
    throw error;
  }
}

export const etagOf = (version: number) => `"${version}"`;

export const SubscriptionETag = {
  ETag: {
    type: 'string',
    description:
      'The subscription\'s current version, a strong entity-tag (`"3"`): send it in If-Match to change the subscription only if it is still so.',
  },
} as const;

const ID_SCHEMA = { type: 'string', minLength: 1, maxLength: 64, pattern: OPAQUE_ID } as const;
export const SubscriptionPath = {
  type: 'object',
  required: ['id'],
  properties: { id: { ...ID_SCHEMA, description: 'The subscription id (whk_...).' } },
} as const;
export const DeliveryPath = {
  type: 'object',
  required: ['id', 'deliveryId'],
  properties: {
    ...SubscriptionPath.properties,
    deliveryId: { ...ID_SCHEMA, description: 'The delivery id (dlv_...).' },
  },
} as const;

export const iso = (date: Date) => date.toISOString();

export function subscriptionJson(s: SubscriptionRecord) {
  return {
    id: s.id,
    url: s.url,
    ...(s.description === undefined ? {} : { description: s.description }),
    eventTypes: [...s.eventTypes],
    ...(s.tag === undefined ? {} : { tag: s.tag }),
    enabled: s.enabled,
    ...(s.disabledAt === undefined ? {} : { disabledAt: iso(s.disabledAt) }),
    ...(s.disabledReason === undefined ? {} : { disabledReason: s.disabledReason }),
    ...(s.maxPerSecond === undefined ? {} : { maxPerSecond: s.maxPerSecond }),
    createdAt: iso(s.createdAt),
  };
}

function attemptJson(a: AttemptRecord) {
  return {
    attempt: a.attempt,
    attemptedAt: iso(a.attemptedAt),
    ...(a.responseStatus === undefined ? {} : { responseStatus: a.responseStatus }),
    latencyMs: a.latencyMs,
    ...(a.error === undefined ? {} : { error: a.error }),
    ...(a.responseBody === undefined ? {} : { responseBody: a.responseBody }),
    ...(a.responseContentType === undefined ? {} : { responseContentType: a.responseContentType }),
  };
}

/** The store only ever records the types there are; anything else is a bug, answered 500. */
function knownEventType(text: string): EventType {
  if (!isEventType(text)) throw new Error(`the store holds a delivery of an unknown event type: ${text}`);
  return text;
}

export function deliveryJson(d: DeliveryRecord) {
  return {
    id: d.id,
    eventId: d.eventId,
    eventType: knownEventType(d.eventType),
    status: d.status,
    attemptCount: d.attemptCount,
    ...(d.nextAttemptAt === undefined ? {} : { nextAttemptAt: iso(d.nextAttemptAt) }),
    createdAt: iso(d.createdAt),
    ...(d.plant === undefined ? {} : { plantId: d.plant.id }),
    ...(d.plant?.name === undefined ? {} : { plantName: d.plant.name }),
    attempts: d.attempts.map(attemptJson),
  };
}

export const webhookNotFound = (id: string) => failure('WEBHOOK_NOT_FOUND', [id]);

export async function existingSubscription(store: WebhookStore, id: string): Promise<SubscriptionRecord> {
  const subscription = await store.getSubscription(id);
  if (subscription === undefined) throw webhookNotFound(id);
  return subscription;
}

export const example = {
  id: 'whk_3f1c0e9a7b2d4c5e6f708192',
  url: 'https://example.com/hooks/plants',
  description: 'inventory sync',
  eventTypes: ['plant.created'],
  enabled: true,
  createdAt: '2026-01-01T12:00:00.000Z',
};
export const deliveryExample = {
  id: 'dlv_0f9e8d7c6b5a49382716f5e4d3c2b1a0',
  eventId: 'msg_2bVq3v0oZ8yKkq7m9L1c4Q',
  eventType: 'plant.created',
  status: 'pending',
  attemptCount: 1,
  nextAttemptAt: '2026-01-01T12:00:06.000Z',
  createdAt: '2026-01-01T12:00:00.000Z',
  plantId: 10,
  plantName: 'Monstera deliciosa',
  attempts: [
    {
      attempt: 1,
      attemptedAt: '2026-01-01T12:00:00.012Z',
      responseStatus: 503,
      latencyMs: 41,
      error: 'the subscriber answered 503',
    },
  ],
};
