/**
 * The webhook feature. The dispatcher is nudged after each successful plant write, once the
 * response is sent so it never delays one, and stops before the store closes.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Counter } from 'prom-client';
import { runsBackgroundJobs } from '../plugins/app/cluster.js';
import { WebhookDispatcher } from './dispatcher.js';
import { WebhookRetentionJob } from './retention.js';
import { DeletedPlant, WebhookDisabledEvent } from './openapi.js';
import { webhookRoutes } from './routes.js';
import { webhookChangeRoute } from './change-route.js';
import { webhookEventTypesRoute } from './event-types-route.js';
import { webhookTestRoute } from './test-route.js';
import { WebhookRecoveries } from './recovery.js';
import { webhookRecoveryRoutes } from './recovery-routes.js';
import {
  CreatedWebhookSubscription,
  DeliveryAttempt,
  NewWebhookSubscription,
  RotatedWebhookSubscription,
  RotateWebhookSecret,
  WebhookDelivery,
  WebhookSubscription,
  WebhookSubscriptionPatch,
  RecoverWebhook,
  WebhookRecovery,
} from './schemas.js';

declare module 'fastify' {
  interface FastifyInstance {
    webhookDispatcher?: WebhookDispatcher;
    webhookRetention?: WebhookRetentionJob;
    webhookRecoveries?: WebhookRecoveries;
  }
}

export const webhookDispatcher = fp(
  async (app: FastifyInstance) => {
    const { config } = app;
    const store = app.store.webhooks;
    const { cluster } = app;
    const background = runsBackgroundJobs(app);
    const disabledTotal = new Counter({
      name: 'plantstore_webhook_subscriptions_disabled_total',
      help: 'Webhook subscriptions this instance disabled because every attempt failed for WEBHOOK_DISABLE_AFTER.',
      registers: [app.metrics.registry],
    });
    const unrecordedTotal = new Counter({
      name: 'plantstore_webhook_attempt_records_failed_total',
      help: 'Webhook delivery attempts whose record the store refused; their deliveries were finished without it.',
      registers: [app.metrics.registry],
    });
    const dispatcher = new WebhookDispatcher(store, {
      concurrency: config.webhookConcurrency,
      pollIntervalMs: config.webhookPollIntervalMs,
      timeoutMs: config.webhookTimeoutMs,
      retrySchedule: config.webhookRetrySchedule,
      urlPolicy: { allowPrivate: config.webhookAllowPrivateUrls },
      log: app.log.child({ component: 'webhooks' }),
      disableAfterMs: config.webhookDisableAfterMs,
      onDisabled: () => disabledTotal.inc(),
      onAttemptNotRecorded: () => unrecordedTotal.inc(),
      elsewhere: background || cluster === null ? undefined : () => cluster.primary.tell('nudge', null),
    });
    if (background) cluster?.primary.on('nudge', () => dispatcher.nudge());
    const retention = new WebhookRetentionJob(store, {
      retentionDays: config.webhookRetentionDays,
      log: app.log.child({ component: 'webhooks' }),
    });
    const recoveries = new WebhookRecoveries(store, {
      log: app.log.child({ component: 'webhooks' }),
      nudge: () => dispatcher.nudge(),
    });
    app.decorate('webhookDispatcher', dispatcher);
    app.decorate('webhookRecoveries', recoveries);
    app.decorate('webhookRetention', retention);
    app.addHook('onReady', async () => {
      // In a multi-worker instance, one worker runs these (src/cluster/background-slot.ts).
      if (!background) return;
      dispatcher.start();
      retention.start();
      recoveries.startSweeping();
    });
    app.addHook('onClose', async () => {
      await Promise.all([dispatcher.stop(), retention.stop(), recoveries.stop()]);
    });
    // A callback hook: it runs on every request, and an async one costs a promise each time.
    app.addHook('onResponse', (request, reply, done) => {
      const url = request.routeOptions.url;
      if (
        reply.statusCode < 300 &&
        request.method !== 'GET' &&
        request.method !== 'HEAD' &&
        (url === '/plants' || url === '/plants/:id' || url === '/plants/import')
      )
        dispatcher.nudge();
      done();
    });
  },
  { name: 'webhook-dispatcher', dependencies: ['store', 'metrics', 'cluster'], decorators: { fastify: ['config'] } },
);

export const webhooksPlugin = fp(
  async (app: FastifyInstance) => {
    const shared = [
      DeletedPlant,
      WebhookDisabledEvent,
      NewWebhookSubscription,
      WebhookSubscription,
      WebhookSubscriptionPatch,
      CreatedWebhookSubscription,
      RotateWebhookSecret,
      RotatedWebhookSubscription,
      DeliveryAttempt,
      WebhookDelivery,
      RecoverWebhook,
      WebhookRecovery,
    ];
    for (const schema of shared) app.addSchema(schema);
    await app.register(webhookRoutes);
    await app.register(webhookChangeRoute);
    await app.register(webhookRecoveryRoutes);
    await app.register(webhookEventTypesRoute);
    await app.register(webhookTestRoute);
  },
  { name: 'webhooks', dependencies: ['store', 'auth', 'query-string-rules', 'collect-routes', 'webhook-dispatcher'] },
);
