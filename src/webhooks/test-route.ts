/**
 * POST /webhooks/{id}/test: one signed `webhook.test` message sent now, outside the outbox (it is not logged
 * nor retried), answering the receiver's outcome, so a receiver can be checked before or after enabling it.
 */
import { newEventId } from '../domain/events.js';
import type { TypedRoutes } from '../http/type-provider.js';
import { bearerAuth } from '../tokens/auth.js';
import { SubscriptionPath, webhookNotFound } from './route-parts.js';
import { sendWebhook } from './sender.js';
import { webhookHeaders } from './signing.js';

export const WEBHOOK_TEST = 'webhook.test' as const;

export const webhookTestRoute: TypedRoutes = async (app) => {
  const { store, config } = app;
  app.post(
    '/webhooks/:id/test',
    {
      schema: {
        operationId: 'testWebhook',
        summary: 'Send a test message',
        description:
          `Sends one \`${WEBHOOK_TEST}\` message to the subscription's URL now, signed as every delivery is (both secrets ` +
          'during a rotation), with the body `{"subscriptionId": ..., "message": ...}`, and answers how the receiver ' +
          'answered. It is sent whether or not the subscription is enabled, and is neither logged nor retried.',
        tags: ['webhooks'],
        security: bearerAuth('admin'),
        params: SubscriptionPath,
        response: {
          200: {
            type: 'object',
            description: "The attempt's outcome.",
            required: ['eventId', 'eventType', 'succeeded', 'latencyMs'],
            additionalProperties: false,
            properties: {
              eventId: { type: 'string', description: 'The webhook-id the receiver saw.' },
              eventType: { type: 'string', enum: [WEBHOOK_TEST] },
              succeeded: { type: 'boolean', description: 'Whether the receiver acknowledged it (2xx in time).' },
              responseStatus: { type: 'integer', description: "The receiver's status; absent when none came." },
              latencyMs: { type: 'number', description: 'Milliseconds from sending to the status (or the failure).' },
              error: { type: 'string', description: 'Why it did not acknowledge; absent on success.' },
            },
            examples: [
              {
                eventId: 'msg_2bVq3v0oZ8yKkq7m9L1c4Q',
                eventType: WEBHOOK_TEST,
                succeeded: true,
                responseStatus: 204,
                latencyMs: 38,
              },
            ],
          },
        },
      },
      config: { failures: ['WEBHOOK_NOT_FOUND', 'STORE_UNAVAILABLE'] },
    },
    async (request) => {
      const { id } = request.params;
      const now = new Date();
      const keys = await store.webhooks.signingKeys(id, now);
      if (keys === undefined) throw webhookNotFound(id);
      const eventId = newEventId();
      const payload = JSON.stringify({ subscriptionId: id, message: 'a test message from Plant Store' });
      const headers = webhookHeaders(
        {
          secret: keys.secret,
          ...(keys.previousSecret === undefined ? {} : { previousSecret: keys.previousSecret }),
          eventId,
          eventType: WEBHOOK_TEST,
          payload,
        },
        now,
      );
      const result = await sendWebhook({
        url: keys.url,
        headers,
        body: payload,
        timeoutMs: config.webhookTimeoutMs,
        policy: { allowPrivate: config.webhookAllowPrivateUrls },
      });
      return {
        eventId,
        eventType: WEBHOOK_TEST,
        succeeded: result.error === undefined,
        ...(result.status === undefined ? {} : { responseStatus: result.status }),
        latencyMs: result.latencyMs,
        ...(result.error === undefined ? {} : { error: result.error }),
      };
    },
  );
};
