/**
 * The live change stream feature: GET /events, the hub that follows the change log
 * (started with the first stream, so an instance nobody streams from opens no
 * LISTEN connection), its heartbeat, the change log's retention, and a clean end
 * of every stream when the app shuts down (so clients reconnect elsewhere).
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ChangeHub } from './change-hub.js';
import { ChangeLogRetention } from './retention.js';
import { eventRoutes } from './routes.js';

export const eventsPlugin = fp(async (app: FastifyInstance) => {
  const settings = app.config.events;
  const logger = app.log.child({ component: 'events' });
  let hub: Promise<ChangeHub> | undefined;
  const startedHub = (): Promise<ChangeHub> => {
    hub ??= ChangeHub.start(app.store.changes, logger);
    // A store that was down when the first stream came is tried again by the next.
    return hub.catch((error: unknown) => {
      hub = undefined;
      throw error;
    });
  };
  const retention = new ChangeLogRetention(app.store.changes, settings.retentionHours, logger);
  const heartbeat = setInterval(() => {
    void hub?.then((started) => {
      for (const stream of started.all()) stream.heartbeat();
    });
  }, settings.heartbeatMs);
  heartbeat.unref();

  app.addHook('onReady', async () => retention.start());
  app.addHook('preClose', async () => {
    clearInterval(heartbeat);
    const started = await hub?.catch(() => undefined);
    for (const stream of started?.all() ?? []) stream.close('shutdown', 'the server is shutting down; reconnect to resume from lastEventId');
    started?.stop();
  });
  app.addHook('onClose', async () => retention.stop());
  await app.register(eventRoutes({ hub: startedHub, ...settings }));
}, { name: 'events', dependencies: ['store', 'auth'] });
