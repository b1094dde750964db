/**
 * The webhook feature: its shared schemas and routes (webhooksPlugin), and the
 * dispatcher (webhookDispatcher), wired into the app's lifecycle: it starts when the app is ready,
 * is nudged after each successful plant write (after the response is sent, so it never
 * delays one), and stops when the app closes, before the store does. The retention
 * job that keeps the outbox from growing forever lives and dies with it.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { WebhookDispatcher } from './dispatcher.js';
import { WebhookRetentionJob } from './retention.js';
import { DeletedPlant } from './openapi.js';
import { webhookRoutes } from './routes.js';
import { CreatedWebhookSubscription, DeliveryAttempt, NewWebhookSubscription, RotatedWebhookSubscription, RotateWebhookSecret, WebhookDelivery, WebhookSubscription } from './schemas.js';

declare module 'fastify' {
  interface FastifyInstance {
    webhookDispatcher?: WebhookDispatcher;
    webhookRetention?: WebhookRetentionJob;
  }
}

export const webhookDispatcher = fp(async (app: FastifyInstance) => {
  const { config } = app;
  const store = app.store.webhooks;
  const dispatcher = new WebhookDispatcher(store, {
    concurrency: config.webhookConcurrency,
    pollIntervalMs: config.webhookPollIntervalMs,
    timeoutMs: config.webhookTimeoutMs,
    retrySchedule: config.webhookRetrySchedule,
    urlPolicy: { allowPrivate: config.webhookAllowPrivateUrls },
    log: app.log.child({ component: 'webhooks' }),
  });
  const retention = new WebhookRetentionJob(store, {
    retentionDays: config.webhookRetentionDays,
    log: app.log.child({ component: 'webhooks' }),
  });
  app.decorate('webhookDispatcher', dispatcher);
  app.decorate('webhookRetention', retention);
  app.addHook('onReady', async () => {
    dispatcher.start();
    retention.start();
  });
  app.addHook('onClose', async () => {
    await Promise.all([dispatcher.stop(), retention.stop()]);
  });
  // After a plant write that succeeded, whose event (if any) is in the outbox now. A
  // write that wrote no event (a replay, a no-op change) makes the nudge find
  // nothing, at the cost of one read (nudges are coalesced). A callback hook: it runs
  // on every request, and an async one costs a promise each time.
  app.addHook('onResponse', (request, reply, done) => {
    const url = request.routeOptions.url;
    if (reply.statusCode < 300 && request.method !== 'GET' && request.method !== 'HEAD' && (url === '/plants' || url === '/plants/:id' || url === '/plants/import')) dispatcher.nudge();
    done();
  });
}, { name: 'webhook-dispatcher', dependencies: ['store'], decorators: { fastify: ['config'] } });

export const webhooksPlugin = fp(async (app: FastifyInstance) => {
  const shared = [DeletedPlant, NewWebhookSubscription, WebhookSubscription, CreatedWebhookSubscription, RotateWebhookSecret, RotatedWebhookSubscription, DeliveryAttempt, WebhookDelivery];
  for (const schema of shared) app.addSchema(schema);
  await app.register(webhookRoutes);
}, { name: 'webhooks', dependencies: ['store', 'auth', 'query-string-rules', 'collect-routes', 'webhook-dispatcher'] });
