/**
 * The store as a plugin, opened from DATABASE_URL at start and closed with the app, after the features that
 * use it (onClose hooks run last-registered first). Its calls are timed at this boundary.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { registerBatchMetrics } from '../../metrics/batches.js';
import { instrumentStore } from '../../metrics/instrument-store.js';
import { registerPoolMetrics } from '../../metrics/pool.js';
import { registerWebhookBacklogMetrics } from '../../metrics/webhook-backlog.js';
import { openStore } from '../../store/open-store.js';
import type { WriterChannel } from '../../store/sqlite/store-writer.js';
import type { Store } from '../../store/types.js';
import type { ClusterWorker } from './cluster.js';

declare module 'fastify' {
  interface FastifyInstance {
    store: Store;
  }
}

export interface StorePluginOptions {
  /** A store opened already, which its owner closes (tests share one across apps); by default the app opens its own. */
  readonly store?: Store;
}

/** SQLite writes through the primary's writer; commits anywhere in the instance wake this worker's change stream. */
function writerChannel({ primary }: ClusterWorker): WriterChannel {
  return {
    send: (writes) => primary.ask('writes', writes),
    onCommitted: (listener) => primary.on('committed', listener),
  };
}

export const storePlugin = fp(
  async (app: FastifyInstance, options: StorePluginOptions) => {
    const store =
      options.store ??
      (await openStore(app.config.databaseUrl, {
        ...app.config,
        writerChannel: app.cluster === null ? undefined : writerChannel(app.cluster),
        onBackgroundError: (error) =>
          app.log.error({ err: error }, 'a database connection failed while idle; the pool replaced it'),
      }));
    if (options.store === undefined) app.addHook('onClose', () => store.close());
    registerPoolMetrics(app.metrics.registry, store);
    registerBatchMetrics(app.metrics.registry, store);
    registerWebhookBacklogMetrics(app.metrics.registry, store);
    app.decorate('store', instrumentStore(store, app.metrics));
  },
  { name: 'store', dependencies: ['cluster'], decorators: { fastify: ['config', 'metrics'] } },
);
