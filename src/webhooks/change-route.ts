/**
 * PATCH /webhooks/{id}: change a subscription in place (URL, description, event types, enabled), keeping its
 * secret, its pending deliveries and its log. Conditional on If-Match like a plant's PATCH: the store checks the
 * version under a lock, so of concurrent writers sending one ETag exactly one wins.
 */
import { EVENT_TYPES } from '../domain/events.js';
import { entityTagListHeader } from '../http/conditional-headers.js';
import { failure } from '../http/errors.js';
import { MERGE_PATCH } from '../http/json-body.js';
import type { TypedRoutes } from '../http/type-provider.js';
import { expectedByIfMatch } from '../plants/preconditions.js';
import type { ExpectedSubscriptionVersion, SubscriptionChange } from '../store/types.js';
import { bearerAuth } from '../tokens/auth.js';
import {
  etagOf,
  example,
  refuseMalformedUrl,
  subscriptionJson,
  SubscriptionETag,
  SubscriptionPath,
} from './route-parts.js';
import type { WebhookSubscription, WebhookSubscriptionPatch } from './schemas.js';
import { checkWebhookUrl, WebhookUrlError } from './url-policy.js';

function expectation(header: string | undefined): ExpectedSubscriptionVersion | undefined {
  const expected = expectedByIfMatch(header);
  return expected === undefined || expected === 'any' ? expected : expected.map(Number);
}

export const webhookChangeRoute: TypedRoutes<[typeof WebhookSubscriptionPatch, typeof WebhookSubscription]> = async (
  app,
) => {
  const { store, config } = app;
  app.patch(
    '/webhooks/:id',
    {
      schema: {
        operationId: 'updateWebhook',
        summary: 'Change a subscription',
        description:
          'Changes a subscription with a JSON Merge Patch (RFC 7396), keeping its id, secret, pending deliveries and log. ' +
          'A new url is checked as on subscribing; deliveries still pending go to it. New eventTypes and a new tag filter ' +
          '(`tag`, null removes it) apply to events written from now on. `enabled: false` disables it (recording disabledAt and disabledReason): its events ' +
          'are kept and sent once `enabled: true` comes. A change that changes nothing answers 200 and keeps the ' +
          'version. With `If-Match: <ETag>` the change is made only if the subscription is still at that version, ' +
          'else 412 and nothing changes.',
        tags: ['webhooks'],
        security: bearerAuth('admin'),
        consumes: [MERGE_PATCH, 'application/json'],
        params: SubscriptionPath,
        headers: {
          type: 'object',
          properties: {
            'if-match': entityTagListHeader(
              'An ETag of the subscription (or `*`): the change is made only if it is at that version, else 412.',
            ),
          },
        },
        body: {
          $ref: 'WebhookSubscriptionPatch',
          examples: [{ enabled: false, disabledReason: 'receiver migration' }],
        },
        response: {
          200: {
            $ref: 'WebhookSubscription',
            description: 'The subscription after the change, with its new ETag.',
            headers: SubscriptionETag,
            examples: [
              {
                ...example,
                enabled: false,
                disabledAt: '2026-01-02T08:00:00.000Z',
                disabledReason: 'receiver migration',
              },
            ],
          },
        },
      },
      config: { failures: ['INVALID_WEBHOOK_URL', 'WEBHOOK_NOT_FOUND', 'PRECONDITION_FAILED', 'STORE_UNAVAILABLE'] },
      preValidation: refuseMalformedUrl,
    },
    async (request, reply) => {
      const { id } = request.params;
      const expected = expectation(request.headers['if-match']);
      const { url, description, eventTypes, tag, enabled, disabledReason, maxPerSecond } = request.body;
      let checkedUrl: string | undefined;
      try {
        checkedUrl =
          url === undefined
            ? undefined
            : (await checkWebhookUrl(url, { allowPrivate: config.webhookAllowPrivateUrls })).href;
      } catch (error) {
        if (error instanceof WebhookUrlError) throw failure('INVALID_WEBHOOK_URL', [error.message]);
        throw error;
      }
      const change: SubscriptionChange = {
        ...(checkedUrl === undefined ? {} : { url: checkedUrl }),
        ...(description === undefined ? {} : { description }),
        // Each type once, in the catalogue's order, as on subscribing.
        ...(eventTypes === undefined ? {} : { eventTypes: EVENT_TYPES.filter((type) => eventTypes.includes(type)) }),
        ...(tag === undefined ? {} : { tag }),
        ...(enabled === undefined ? {} : { enabled }),
        ...(disabledReason === undefined ? {} : { disabledReason }),
        ...(maxPerSecond === undefined ? {} : { maxPerSecond }),
      };
      const outcome = await store.webhooks.updateSubscription(id, change, expected, new Date());
      if (outcome.kind === 'precondition-failed')
        throw failure('PRECONDITION_FAILED', [
          `subscription ${id} is at version ${etagOf(outcome.current.version)}, not one If-Match names; read it again and retry`,
        ]);
      if (outcome.kind === 'not-found') {
        if (expected !== undefined)
          throw failure('PRECONDITION_FAILED', [`no subscription has id ${id}, so If-Match cannot match`]);
        throw failure('WEBHOOK_NOT_FOUND', [id]);
      }
      // Deliveries an enabled subscription had waiting are due now.
      if (outcome.subscription.enabled) app.webhookDispatcher?.nudge();
      reply.header('etag', etagOf(outcome.subscription.version));
      return subscriptionJson(outcome.subscription);
    },
  );
};
