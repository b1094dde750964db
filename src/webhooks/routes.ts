/**
 * Webhook subscriptions and their delivery log (admin scope). Thin handlers: the
 * URL policy and secret live in subscriptions.ts, delivery in dispatcher.ts.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, Errors } from '../http/errors.js';
import type { Operation } from '../http/operation.js';
import { OPAQUE_ID } from '../http/text-rules.js';
import type { DeliveryAttempt as AttemptRecord, DeliveryStatus, WebhookDelivery as DeliveryRecord, WebhookSubscription as SubscriptionRecord } from '../store/types.js';
import { createSubscription, type SubscriptionRequest } from './subscriptions.js';
import {
  CreatedWebhookSubscription,
  NewWebhookSubscription,
  RotatedWebhookSubscription,
  RotateWebhookSecret,
  WebhookDelivery,
  WebhookSubscription,
} from './schemas.js';
import { DEFAULT_OVERLAP_SECONDS, rotateSigningSecret } from './secret-rotation.js';
import { WebhookUrlError } from './url-policy.js';

export const DELIVERIES_DEFAULT_LIMIT = 100;
export const DELIVERIES_MAX_LIMIT = 1000;

const ID_SCHEMA = { type: 'string', minLength: 1, maxLength: 64, pattern: OPAQUE_ID } as const;
const idParameter = { name: 'id', schema: ID_SCHEMA, required: true, description: 'The subscription id (whk_...).' };
const deliveryIdParameter = { name: 'deliveryId', schema: ID_SCHEMA, required: true, description: 'The delivery id (dlv_...).' };

const iso = (date: Date) => date.toISOString();

function subscriptionJson(s: SubscriptionRecord): Record<string, unknown> {
  return { id: s.id, url: s.url, ...(s.description === undefined ? {} : { description: s.description }), createdAt: iso(s.createdAt) };
}

function attemptJson(a: AttemptRecord): Record<string, unknown> {
  return {
    attempt: a.attempt,
    attemptedAt: iso(a.attemptedAt),
    ...(a.responseStatus === undefined ? {} : { responseStatus: a.responseStatus }),
    latencyMs: a.latencyMs,
    ...(a.error === undefined ? {} : { error: a.error }),
  };
}

function deliveryJson(d: DeliveryRecord): Record<string, unknown> {
  return {
    id: d.id,
    eventId: d.eventId,
    eventType: d.eventType,
    status: d.status,
    attemptCount: d.attemptCount,
    ...(d.nextAttemptAt === undefined ? {} : { nextAttemptAt: iso(d.nextAttemptAt) }),
    createdAt: iso(d.createdAt),
    attempts: d.attempts.map(attemptJson),
  };
}

function params(request: FastifyRequest): { id: string; deliveryId: string } {
  return request.params as { id: string; deliveryId: string };
}

const webhookNotFound = (id: string) => new ApiError(Errors.WEBHOOK_NOT_FOUND, `no webhook subscription has id ${id}`);

async function existingSubscription(request: FastifyRequest): Promise<SubscriptionRecord> {
  const { id } = params(request);
  const subscription = await request.server.store.webhooks.getSubscription(id);
  if (subscription === undefined) throw webhookNotFound(id);
  return subscription;
}

const example = { id: 'whk_3f1c0e9a7b2d4c5e6f708192', url: 'https://example.com/hooks/plants', description: 'inventory sync', createdAt: '2026-01-01T12:00:00.000Z' };
const deliveryExample = {
  id: 'dlv_0f9e8d7c6b5a49382716f5e4d3c2b1a0',
  eventId: 'msg_2bVq3v0oZ8yKkq7m9L1c4Q',
  eventType: 'plant.created',
  status: 'pending',
  attemptCount: 1,
  nextAttemptAt: '2026-01-01T12:00:06.000Z',
  createdAt: '2026-01-01T12:00:00.000Z',
  attempts: [{ attempt: 1, attemptedAt: '2026-01-01T12:00:00.012Z', responseStatus: 503, latencyMs: 41, error: 'the subscriber answered 503' }],
};

export const createWebhook: Operation = {
  operationId: 'createWebhook',
  method: 'POST',
  path: '/webhooks',
  summary: 'Subscribe to events',
  description:
    'Registers a URL that receives every `plant.created` event (see the `webhooks` section: the body is the `NewPlant`, ' +
    'signed per Standard Webhooks). The response carries the signing secret, **shown only here**.',
  tags: ['webhooks'],
  scope: 'admin',
  body: NewWebhookSubscription,
  bodyExample: { url: 'https://example.com/hooks/plants', description: 'inventory sync' },
  success: { status: 201, description: 'The subscription, with its signing secret.', schema: CreatedWebhookSubscription, example: { ...example, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' } },
  errors: ['INVALID_WEBHOOK_URL', 'STORE_UNAVAILABLE'],
  async handler(request, reply: FastifyReply) {
    const body = request.body as SubscriptionRequest;
    const { config, store } = request.server;
    try {
      const input = body.description === undefined ? { url: body.url } : { url: body.url, description: body.description };
      const created = await createSubscription(store.webhooks, input, { allowPrivate: config.webhookAllowPrivateUrls });
      return reply.code(201).send({ ...subscriptionJson(created), secret: created.secret });
    } catch (error) {
      if (error instanceof WebhookUrlError) throw new ApiError(Errors.INVALID_WEBHOOK_URL, `url refused: ${error.message}`);
      throw error;
    }
  },
};

export const listWebhooks: Operation = {
  operationId: 'listWebhooks',
  method: 'GET',
  path: '/webhooks',
  summary: 'List subscriptions',
  description: 'Every webhook subscription, oldest first (never their secrets).',
  tags: ['webhooks'],
  scope: 'admin',
  success: { status: 200, description: 'The subscriptions.', schema: { type: 'array', items: WebhookSubscription }, example: [example] },
  errors: ['STORE_UNAVAILABLE'],
  async handler(request) {
    return (await request.server.store.webhooks.listSubscriptions()).map(subscriptionJson);
  },
};

export const getWebhook: Operation = {
  operationId: 'getWebhook',
  method: 'GET',
  path: '/webhooks/{id}',
  summary: 'Read a subscription',
  description: 'One subscription (not its secret).',
  tags: ['webhooks'],
  scope: 'admin',
  pathParams: [idParameter],
  success: { status: 200, description: 'The subscription.', schema: WebhookSubscription, example },
  errors: ['WEBHOOK_NOT_FOUND', 'STORE_UNAVAILABLE'],
  async handler(request) {
    return subscriptionJson(await existingSubscription(request));
  },
};

export const deleteWebhook: Operation = {
  operationId: 'deleteWebhook',
  method: 'DELETE',
  path: '/webhooks/{id}',
  summary: 'Unsubscribe',
  description: 'Deletes the subscription with its pending deliveries and delivery log. Nothing more is sent to it (an attempt already in flight may still arrive).',
  tags: ['webhooks'],
  scope: 'admin',
  pathParams: [idParameter],
  success: { status: 204, description: 'Deleted; the body is empty.' },
  errors: ['WEBHOOK_NOT_FOUND', 'STORE_UNAVAILABLE'],
  async handler(request, reply: FastifyReply) {
    const { id } = params(request);
    if (!(await request.server.store.webhooks.deleteSubscription(id))) throw webhookNotFound(id);
    return reply.code(204).send();
  },
};

export const rotateWebhookSecret: Operation = {
  operationId: 'rotateWebhookSecret',
  method: 'POST',
  path: '/webhooks/{id}/rotate-secret',
  summary: 'Rotate the signing secret',
  description:
    'Gives the subscription a new signing secret, **shown only in this response**. The previous one stays valid for ' +
    `\`overlapSeconds\` (default ${DEFAULT_OVERLAP_SECONDS}, 24 h): until then every delivery carries two signatures in ` +
    'webhook-signature, the new secret\'s first, so the receiver accepts deliveries whichever secret it holds while it ' +
    'switches. Rotating again during an overlap ends the older secret at once: there are never more than two. ' +
    'Pending deliveries and the delivery log are kept. The body is optional.',
  tags: ['webhooks'],
  scope: 'admin',
  pathParams: [idParameter],
  body: RotateWebhookSecret,
  bodyOptional: true,
  bodyExample: { overlapSeconds: 3600 },
  success: {
    status: 200,
    description: 'The subscription, with its new signing secret.',
    schema: RotatedWebhookSubscription,
    example: { ...example, secret: 'whsec_c2Vjb25kIHNlY3JldCBmb3Igcm90YXRpb24', previousSecretExpiresAt: '2026-01-01T13:00:00.000Z' },
  },
  errors: ['WEBHOOK_NOT_FOUND', 'STORE_UNAVAILABLE'],
  async handler(request) {
    const subscription = await existingSubscription(request);
    const body = request.body as { overlapSeconds?: number } | null | undefined;
    const rotated = await rotateSigningSecret(request.server.store.webhooks, subscription.id, body?.overlapSeconds);
    // Deleted between the read and the rotation.
    if (rotated === undefined) throw webhookNotFound(subscription.id);
    const expiry = rotated.previousSecretExpiresAt;
    return { ...subscriptionJson(subscription), secret: rotated.secret, ...(expiry === undefined ? {} : { previousSecretExpiresAt: iso(expiry) }) };
  },
};

export const listWebhookDeliveries: Operation = {
  operationId: 'listWebhookDeliveries',
  method: 'GET',
  path: '/webhooks/{id}/deliveries',
  summary: 'Delivery log',
  description:
    'The deliveries of events to this subscription, newest first, each with every attempt: when, the HTTP status, ' +
    'the latency and why it did not acknowledge. Finished deliveries are deleted with their event once it is ' +
    'WEBHOOK_RETENTION_DAYS old (30 by default; 0 keeps them forever); a pending one is kept until it finishes.',
  tags: ['webhooks'],
  scope: 'admin',
  pathParams: [idParameter],
  query: [
    {
      name: 'limit',
      schema: { type: 'integer', format: 'int32', minimum: 1, maximum: DELIVERIES_MAX_LIMIT, default: DELIVERIES_DEFAULT_LIMIT },
      description: `Maximum number of deliveries (1 to ${DELIVERIES_MAX_LIMIT}; default ${DELIVERIES_DEFAULT_LIMIT}).`,
    },
    { name: 'status', schema: { type: 'string', enum: ['pending', 'succeeded', 'failed'] }, description: 'Only deliveries in this state.' },
  ],
  success: { status: 200, description: 'The deliveries.', schema: { type: 'array', items: WebhookDelivery }, example: [deliveryExample] },
  errors: ['WEBHOOK_NOT_FOUND', 'STORE_UNAVAILABLE'],
  async handler(request) {
    const subscription = await existingSubscription(request);
    const query = request.query as { limit: number; status?: DeliveryStatus };
    const deliveries = await request.server.store.webhooks.listDeliveries(subscription.id, query.status === undefined ? { limit: query.limit } : query);
    return deliveries.map(deliveryJson);
  },
};

export const retryWebhookDelivery: Operation = {
  operationId: 'retryWebhookDelivery',
  method: 'POST',
  path: '/webhooks/{id}/deliveries/{deliveryId}/retry',
  summary: 'Retry a delivery now',
  description:
    'Sends a delivery again, at once, with the same webhook-id. A failed (or succeeded) delivery gets exactly one more ' +
    'attempt; a pending one just has its next attempt brought forward. The answer is the delivery as it is now ' +
    '(pending); follow its outcome in the delivery log.',
  tags: ['webhooks'],
  scope: 'admin',
  pathParams: [idParameter, deliveryIdParameter],
  success: { status: 200, description: 'The delivery, due now.', schema: WebhookDelivery, example: { ...deliveryExample, status: 'pending' } },
  errors: ['WEBHOOK_NOT_FOUND', 'WEBHOOK_DELIVERY_NOT_FOUND', 'STORE_UNAVAILABLE'],
  async handler(request) {
    const subscription = await existingSubscription(request);
    const { deliveryId } = params(request);
    const delivery = await request.server.store.webhooks.retryDelivery(subscription.id, deliveryId, new Date());
    if (delivery === undefined) {
      throw new ApiError(Errors.WEBHOOK_DELIVERY_NOT_FOUND, `webhook subscription ${subscription.id} has no delivery with id ${deliveryId}`);
    }
    request.server.webhookDispatcher?.nudge();
    return deliveryJson(delivery);
  },
};

export const webhookOperations: readonly Operation[] = [
  createWebhook, listWebhooks, getWebhook, deleteWebhook, rotateWebhookSecret, listWebhookDeliveries, retryWebhookDelivery,
];
