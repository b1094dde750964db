/**
 * POST /webhooks/{id}/recover and GET /webhooks/{id}/recoveries/{recoveryId}: re-queue a window's failed
 * deliveries in the background (recovery.ts), and read how far it got.
 */
import { failure } from '../http/errors.js';
import type { TypedRoutes } from '../http/type-provider.js';
import type { WebhookRecovery as RecoveryRecord } from '../store/types.js';
import { bearerAuth } from '../tokens/auth.js';
import { RecoveryWindowError, recoveryWindow } from './recovery.js';
import { iso, SubscriptionPath, webhookNotFound } from './route-parts.js';
import type { RecoverWebhook, WebhookRecovery } from './schemas.js';

const ID_SCHEMA = SubscriptionPath.properties.id;
const RecoveryPath = {
  type: 'object',
  required: ['id', 'recoveryId'],
  properties: {
    ...SubscriptionPath.properties,
    recoveryId: { ...ID_SCHEMA, description: 'The recovery id (rcv_...).' },
  },
} as const;

function recoveryJson(r: RecoveryRecord) {
  return {
    id: r.id,
    subscriptionId: r.subscriptionId,
    since: iso(r.since),
    until: iso(r.until),
    status: r.status,
    requeued: r.requeued,
    createdAt: iso(r.createdAt),
    updatedAt: iso(r.updatedAt),
    ...(r.finishedAt === undefined ? {} : { finishedAt: iso(r.finishedAt) }),
  };
}

const example = {
  id: 'rcv_5b1e0c9a7f2d4c3e6a708192',
  subscriptionId: 'whk_3f1c0e9a7b2d4c5e6f708192',
  since: '2026-01-01T00:00:00.000Z',
  until: '2026-01-08T00:00:00.000Z',
  status: 'running',
  requeued: 1500,
  createdAt: '2026-01-08T00:00:00.000Z',
  updatedAt: '2026-01-08T00:00:00.120Z',
};

export const webhookRecoveryRoutes: TypedRoutes<[typeof RecoverWebhook, typeof WebhookRecovery]> = async (app) => {
  const { store, config } = app;
  const admin = bearerAuth('admin');

  app.post(
    '/webhooks/:id/recover',
    {
      schema: {
        operationId: 'recoverWebhook',
        summary: 'Re-queue failed deliveries',
        description:
          'Makes every **failed** delivery of events created in [since, until) pending again, for one more attempt each, ' +
          'in the background (202): follow it at the Location given (GET /webhooks/{id}/recoveries/{recoveryId}). ' +
          'Idempotent: asking again for the same since and until (or again without until) answers the same recovery ' +
          'rather than starting another. Deliveries of a disabled subscription wait until it is enabled.',
        tags: ['webhooks'],
        security: admin,
        params: SubscriptionPath,
        // No example body: a fixed since expires once it is older than WEBHOOK_RETENTION_DAYS (see RecoverWebhook).
        body: { $ref: 'RecoverWebhook' },
        response: {
          202: {
            $ref: 'WebhookRecovery',
            description: 'The recovery, started or already asked for.',
            headers: { Location: { type: 'string', description: 'Where its progress is read.' } },
            examples: [example],
          },
        },
      },
      config: { failures: ['INVALID_FIELD', 'WEBHOOK_NOT_FOUND', 'STORE_UNAVAILABLE'] },
    },
    async (request, reply) => {
      const { id } = request.params;
      const now = new Date();
      let window;
      try {
        window = recoveryWindow(request.body.since, request.body.until, now, config.webhookRetentionDays);
      } catch (error) {
        if (error instanceof RecoveryWindowError) throw failure('INVALID_FIELD', [error.message]);
        throw error;
      }
      const recovery = await app.webhookRecoveries?.start(id, window, now);
      if (recovery === undefined) throw webhookNotFound(id);
      reply.code(202).header('location', `/webhooks/${id}/recoveries/${recovery.id}`);
      return recoveryJson(recovery);
    },
  );

  app.get(
    '/webhooks/:id/recoveries/:recoveryId',
    {
      schema: {
        operationId: 'getWebhookRecovery',
        summary: 'Read a recovery',
        description: 'How far a recovery got: its status and how many failed deliveries it has re-queued so far.',
        tags: ['webhooks'],
        security: admin,
        params: RecoveryPath,
        response: { 200: { $ref: 'WebhookRecovery', description: 'The recovery.', examples: [example] } },
      },
      config: { failures: ['WEBHOOK_RECOVERY_NOT_FOUND', 'STORE_UNAVAILABLE'] },
    },
    async (request) => {
      const { id, recoveryId } = request.params;
      const recovery = await store.webhooks.getRecovery(id, recoveryId);
      if (recovery === undefined) throw failure('WEBHOOK_RECOVERY_NOT_FOUND', [id, recoveryId]);
      return recoveryJson(recovery);
    },
  );
};
