/**
 * Wires the dispatcher into the app's lifecycle: it starts when the app is ready,
 * is nudged after each successful create (after the response is sent, so it never
 * delays one), and stops when the app closes, before the store does. The retention
 * job that keeps the outbox from growing forever lives and dies with it.
 */
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/index.js';
import type { WebhookStore } from '../store/types.js';
import { WebhookDispatcher } from './dispatcher.js';
import { WebhookRetentionJob } from './retention.js';

declare module 'fastify' {
  interface FastifyInstance {
    webhookDispatcher?: WebhookDispatcher;
    webhookRetention?: WebhookRetentionJob;
  }
}

export function registerWebhookDispatcher(app: FastifyInstance, config: Config, store: WebhookStore): WebhookDispatcher {
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
  // A 200 from POST /plants may be a replay, which wrote no event: the nudge then
  // finds nothing, at the cost of one read (nudges are coalesced). A callback hook:
  // it runs on every request, and an async one costs a promise each time.
  app.addHook('onResponse', (request, reply, done) => {
    if (reply.statusCode === 200 && request.method === 'POST' && request.routeOptions.url === '/plants') dispatcher.nudge();
    done();
  });
  return dispatcher;
}
