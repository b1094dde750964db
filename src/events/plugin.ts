/**
 * The live change stream feature. The hub starts with the first stream, so an instance
 * nobody streams from opens no LISTEN connection; every stream is ended cleanly at
 * shutdown, so clients reconnect elsewhere.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { registerOpenStreamsGauge } from '../metrics/activity.js';
import { runsBackgroundJobs } from '../plugins/app/cluster.js';
import { ChangeHub } from './change-hub.js';
import { OpenStreams } from './open-streams.js';
import { ChangeLogRetention } from './retention.js';
import { eventRoutes } from './routes.js';
import { ticketRoutes } from './ticket-routes.js';
import { EventTickets } from './tickets.js';
import { SHUTDOWN_DETAIL } from './sse.js';

/** How often the tokens of open streams are checked again (through the token cache, so a revocation shows within
 * TOKEN_CACHE_TTL_MS more). */
const TOKEN_CHECK_MS = 1000;

export const eventsPlugin = fp(
  async (app: FastifyInstance) => {
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
    const open = new OpenStreams(settings.maxStreamsPerToken);
    registerOpenStreamsGauge(app.metrics.registry, () => open.size);
    const tokenCheck = setInterval(() => {
      open
        .endUnauthorized(app.authenticator)
        .catch((error: unknown) =>
          logger.warn({ err: error }, 'change stream: checking the tokens of open streams failed'),
        );
    }, TOKEN_CHECK_MS);
    tokenCheck.unref();

    // In a multi-worker instance, one worker prunes the log (src/cluster/background-slot.ts).
    if (runsBackgroundJobs(app)) app.addHook('onReady', async () => retention.start());
    // Set once closing starts: a stream asked for from then on is ended as soon as it is set up
    // (the ones open now are ended below), so none outlives the shutdown.
    let closing = false;
    app.addHook('preClose', async () => {
      closing = true;
      clearInterval(heartbeat);
      clearInterval(tokenCheck);
      const started = await hub?.catch(() => undefined);
      for (const stream of started?.all() ?? []) stream.close('shutdown', SHUTDOWN_DETAIL);
      started?.stop();
    });
    app.addHook('onClose', async () => retention.stop());
    const tickets = new EventTickets(settings.ticketTtlMs, settings.maxStreamsPerToken);
    await app.register(
      eventRoutes({
        hub: startedHub,
        closing: () => closing,
        open,
        tickets,
        primary: app.cluster?.primary,
        ...settings,
      }),
    );
    // In a multi-worker instance the primary holds them, so the POST and the GET may reach different workers.
    const primary = app.cluster?.primary;
    await app.register(
      ticketRoutes(
        primary === undefined
          ? (secret, tokenId) => tickets.issue(secret, tokenId)
          : (secret, tokenId) => primary.ask('ticket-issue', { secret, tokenId }),
        settings.ticketTtlMs,
      ),
    );
  },
  {
    name: 'events',
    dependencies: ['store', 'auth', 'query-string-rules', 'collect-routes', 'metrics', 'cluster'],
    decorators: { fastify: ['config'] },
  },
);
