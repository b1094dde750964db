/**
 * Webhook subscriptions and their delivery log (admin scope). Thin handlers: the
 * URL policy and secret live in subscriptions.ts, delivery in dispatcher.ts.
 */
import { failure } from '../http/errors.js';
import type { TypedRoutes } from '../http/type-provider.js';
import { bearerAuth } from '../tokens/auth.js';
import { Int64Id } from '../plants/schemas.js';
import { createSubscription } from './subscriptions.js';
import type {
  CreatedWebhookSubscription,
  DeliveryAttempt,
  NewWebhookSubscription,
  RotatedWebhookSubscription,
  RotateWebhookSecret,
  WebhookDelivery,
  WebhookSubscription,
} from './schemas.js';
import { DEFAULT_OVERLAP_SECONDS, rotateSigningSecret } from './secret-rotation.js';
import { WebhookUrlError } from './url-policy.js';
import {
  deliveryExample,
  deliveryJson,
  DeliveryPath,
  etagOf,
  example,
  existingSubscription,
  iso,
  subscriptionJson,
  SubscriptionETag,
  SubscriptionPath,
  webhookNotFound,
  refuseMalformedUrl,
} from './route-parts.js';

export const DELIVERIES_DEFAULT_LIMIT = 100;
export const DELIVERIES_MAX_LIMIT = 1000;

type WebhookSchemas = [
  typeof NewWebhookSubscription,
  typeof WebhookSubscription,
  typeof CreatedWebhookSubscription,
  typeof RotateWebhookSecret,
  typeof RotatedWebhookSubscription,
  typeof WebhookDelivery,
  typeof DeliveryAttempt,
];

export const webhookRoutes: TypedRoutes<WebhookSchemas> = async (app) => {
  const { store, config } = app;
  const admin = bearerAuth('admin');

  app.post(
    '/webhooks',
    {
      schema: {
        operationId: 'createWebhook',
        summary: 'Subscribe to events',
        description:
          'Registers a URL that receives every event of the types it chooses (`eventTypes`, default `["plant.created"]`; see the ' +
          "`webhooks` section for each event's body, signed per Standard Webhooks), optionally only for plants of one `tag`. " +
          'The response carries the signing secret, ' +
          '**shown only here**.',
        tags: ['webhooks'],
        security: admin,
        body: {
          $ref: 'NewWebhookSubscription',
          examples: [{ url: 'https://example.com/hooks/plants', description: 'inventory sync' }],
        },
        response: {
          201: {
            $ref: 'CreatedWebhookSubscription',
            description: 'The subscription, with its signing secret.',
            examples: [{ ...example, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }],
          },
        },
      },
      config: { failures: ['INVALID_WEBHOOK_URL', 'STORE_UNAVAILABLE'] },
      preValidation: refuseMalformedUrl,
    },
    async (request, reply) => {
      const { url, description, eventTypes, tag, maxPerSecond } = request.body;
      try {
        const input = {
          url,
          ...(description === undefined ? {} : { description }),
          ...(eventTypes === undefined ? {} : { eventTypes }),
          ...(tag === undefined || tag === null ? {} : { tag }),
          ...(maxPerSecond === undefined || maxPerSecond === null ? {} : { maxPerSecond }),
        };
        const created = await createSubscription(store.webhooks, input, {
          allowPrivate: config.webhookAllowPrivateUrls,
        });
        return reply.code(201).send({ ...subscriptionJson(created), secret: created.secret });
      } catch (error) {
        if (error instanceof WebhookUrlError) throw failure('INVALID_WEBHOOK_URL', [error.message]);
        throw error;
      }
    },
  );

  app.get(
    '/webhooks',
    {
      schema: {
        operationId: 'listWebhooks',
        summary: 'List subscriptions',
        description: 'Every webhook subscription, oldest first (never their secrets).',
        tags: ['webhooks'],
        security: admin,
        response: {
          200: {
            type: 'array',
            items: { $ref: 'WebhookSubscription' },
            description: 'The subscriptions.',
            examples: [[example]],
          },
        },
      },
      config: { failures: ['STORE_UNAVAILABLE'] },
    },
    async () => (await store.webhooks.listSubscriptions()).map(subscriptionJson),
  );

  app.get(
    '/webhooks/:id',
    {
      schema: {
        operationId: 'getWebhook',
        summary: 'Read a subscription',
        description: 'One subscription (not its secret).',
        tags: ['webhooks'],
        security: admin,
        params: SubscriptionPath,
        response: {
          200: {
            $ref: 'WebhookSubscription',
            description: 'The subscription.',
            headers: SubscriptionETag,
            examples: [example],
          },
        },
      },
      config: { failures: ['WEBHOOK_NOT_FOUND', 'STORE_UNAVAILABLE'] },
    },
    async (request, reply) => {
      const subscription = await existingSubscription(store.webhooks, request.params.id);
      reply.header('etag', etagOf(subscription.version));
      return subscriptionJson(subscription);
    },
  );

  app.delete(
    '/webhooks/:id',
    {
      schema: {
        operationId: 'deleteWebhook',
        summary: 'Unsubscribe',
        description:
          'Deletes the subscription with its pending deliveries and delivery log. Nothing more is sent to it (an attempt already in flight may still arrive).',
        tags: ['webhooks'],
        security: admin,
        params: SubscriptionPath,
        response: { 204: { type: 'null', description: 'Deleted; the body is empty.' } },
      },
      config: { failures: ['WEBHOOK_NOT_FOUND', 'STORE_UNAVAILABLE'] },
    },
    async (request, reply) => {
      const { id } = request.params;
      if (!(await store.webhooks.deleteSubscription(id))) throw webhookNotFound(id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/webhooks/:id/rotate-secret',
    {
      schema: {
        operationId: 'rotateWebhookSecret',
        summary: 'Rotate the signing secret',
        description:
          'Gives the subscription a new signing secret, **shown only in this response**. The previous one stays valid for ' +
          `\`overlapSeconds\` (default ${DEFAULT_OVERLAP_SECONDS}, 24 h): until then every delivery carries two signatures in ` +
          "webhook-signature, the new secret's first, so the receiver accepts deliveries whichever secret it holds while it " +
          'switches. Rotating again during an overlap ends the older secret at once: there are never more than two. ' +
          'Pending deliveries and the delivery log are kept. The body is optional.',
        tags: ['webhooks'],
        security: admin,
        params: SubscriptionPath,
        body: { $ref: 'RotateWebhookSecret', examples: [{ overlapSeconds: 3600 }] },
        response: {
          200: {
            $ref: 'RotatedWebhookSubscription',
            description: 'The subscription, with its new signing secret.',
            examples: [
              {
                ...example,
                secret: 'whsec_c2Vjb25kIHNlY3JldCBmb3Igcm90YXRpb24',
                previousSecretExpiresAt: '2026-01-01T13:00:00.000Z',
              },
            ],
          },
        },
      },
      config: { failures: ['WEBHOOK_NOT_FOUND', 'STORE_UNAVAILABLE'] },
    },
    async (request) => {
      const subscription = await existingSubscription(store.webhooks, request.params.id);
      const rotated = await rotateSigningSecret(store.webhooks, subscription.id, request.body?.overlapSeconds);
      // Deleted between the read and the rotation.
      if (rotated === undefined) throw webhookNotFound(subscription.id);
      const expiry = rotated.previousSecretExpiresAt;
      return {
        ...subscriptionJson(subscription),
        secret: rotated.secret,
        ...(expiry === undefined ? {} : { previousSecretExpiresAt: iso(expiry) }),
      };
    },
  );

  app.get(
    '/webhooks/:id/deliveries',
    {
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: 'Delivery log',
        description:
          'The deliveries of events to this subscription, newest first, each with every attempt: when, the HTTP status, ' +
          'the latency, the head of the response (first 1 KiB and its Content-Type) and why it did not acknowledge. ' +
          'Filter by status, by event (eventId) and by plant (plantId: the events about that plant). Finished deliveries are deleted with their event once it is ' +
          'WEBHOOK_RETENTION_DAYS old (30 by default; 0 keeps them forever); a pending one is kept until it finishes.',
        tags: ['webhooks'],
        security: admin,
        params: SubscriptionPath,
        querystring: {
          type: 'object',
          properties: {
            limit: {
              type: 'integer',
              format: 'int32',
              minimum: 1,
              maximum: DELIVERIES_MAX_LIMIT,
              default: DELIVERIES_DEFAULT_LIMIT,
              description: `Maximum number of deliveries (1 to ${DELIVERIES_MAX_LIMIT}; default ${DELIVERIES_DEFAULT_LIMIT}).`,
            },
            status: {
              type: 'string',
              enum: ['pending', 'succeeded', 'failed'],
              description: 'Only deliveries in this state.',
            },
            eventId: {
              type: 'string',
              pattern: '^msg_[A-Za-z0-9_-]{1,64}$',
              description: 'Only the delivery of this event (its webhook-id, msg_...).',
            },
            plantId: {
              ...Int64Id,
              description:
                'Only deliveries of events about this plant (an int64, in decimal): created, updated or deleted.',
            },
          },
        },
        response: {
          200: {
            type: 'array',
            items: { $ref: 'WebhookDelivery' },
            description: 'The deliveries.',
            examples: [[deliveryExample]],
          },
        },
      },
      config: { failures: ['WEBHOOK_NOT_FOUND', 'STORE_UNAVAILABLE'] },
    },
    async (request) => {
      const subscription = await existingSubscription(store.webhooks, request.params.id);
      const { limit, status, eventId, plantId } = request.query;
      const deliveries = await store.webhooks.listDeliveries(subscription.id, {
        limit,
        ...(status === undefined ? {} : { status }),
        ...(eventId === undefined ? {} : { eventId }),
        ...(plantId === undefined ? {} : { plantId }),
      });
      return deliveries.map(deliveryJson);
    },
  );

  app.post(
    '/webhooks/:id/deliveries/:deliveryId/retry',
    {
      schema: {
        operationId: 'retryWebhookDelivery',
        summary: 'Retry a delivery now',
        description:
          'Sends a delivery again, at once, with the same webhook-id. A failed (or succeeded) delivery gets exactly one more ' +
          'attempt; a pending one just has its next attempt brought forward. The answer is the delivery as it is now ' +
          '(pending); follow its outcome in the delivery log.',
        tags: ['webhooks'],
        security: admin,
        params: DeliveryPath,
        response: {
          200: {
            $ref: 'WebhookDelivery',
            description: 'The delivery, due now.',
            examples: [{ ...deliveryExample, status: 'pending' }],
          },
        },
      },
      config: { failures: ['WEBHOOK_NOT_FOUND', 'WEBHOOK_DELIVERY_NOT_FOUND', 'STORE_UNAVAILABLE'] },
    },
    async (request) => {
      const subscription = await existingSubscription(store.webhooks, request.params.id);
      const { deliveryId } = request.params;
      const delivery = await store.webhooks.retryDelivery(subscription.id, deliveryId, new Date());
      if (delivery === undefined) {
        throw failure('WEBHOOK_DELIVERY_NOT_FOUND', [subscription.id, deliveryId]);
      }
      app.webhookDispatcher?.nudge();
      return deliveryJson(delivery);
    },
  );
};
