/**
 * GET /webhooks/event-types: the event types a subscription can choose, each with its description and the JSON
 * Schema of its body, from the same definitions as the OpenAPI document's `webhooks` section.
 */
import { EVENT_TYPES } from '../domain/events.js';
import type { TypedRoutes } from '../http/type-provider.js';
import { bearerAuth } from '../tokens/auth.js';
import { eventCatalogue } from './openapi.js';

export const webhookEventTypesRoute: TypedRoutes = async (app) => {
  app.get(
    '/webhooks/event-types',
    {
      schema: {
        operationId: 'listWebhookEventTypes',
        summary: 'Event types',
        description:
          'The event types a subscription can choose (`eventTypes`), each with what it means and the JSON Schema of its ' +
          'body: the same as the `webhooks` section of this document.',
        tags: ['webhooks'],
        security: bearerAuth('admin'),
        response: {
          200: {
            type: 'array',
            description: 'The event types.',
            items: {
              type: 'object',
              required: ['type', 'summary', 'description', 'schema'],
              additionalProperties: false,
              properties: {
                type: { type: 'string', enum: EVENT_TYPES, description: 'As in eventTypes and webhook-event-type.' },
                summary: { type: 'string' },
                description: { type: 'string', description: 'When it is sent, and its body.' },
                schema: {
                  type: 'object',
                  additionalProperties: true,
                  description: 'The JSON Schema of its body.',
                },
              },
            },
          },
        },
      },
      config: { failures: ['STORE_UNAVAILABLE'] },
    },
    async () => {
      const schemas = app.getSchemas() as Record<string, Record<string, unknown> | undefined>;
      return eventCatalogue().map((entry) => ({ ...entry, schema: schemas[entry.schema] ?? {} }));
    },
  );
};
