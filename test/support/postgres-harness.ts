/**
 * A test harness whose PostgreSQL store reaches a fresh test schema through a TCP
 * proxy the test can break: for what happens to requests when the database goes
 * away under them.
 */
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { TestBackend } from './backends.js';
import { createHarness, type Harness } from './harness.js';
import { createTestSchema, postgresBehindProxy, type TestSchema } from './postgres.js';
import type { TcpProxy } from './tcp-proxy.js';

export interface ProxiedHarness {
  readonly h: Harness;
  /** The harness's store, opened through the proxy (small pool, short timeouts). */
  readonly store: PostgresStore;
  readonly proxy: TcpProxy;
  /** The schema itself, reachable directly (not through the proxy). */
  readonly schema: TestSchema;
  close(): Promise<void>;
}

export async function harnessBehindProxy(): Promise<ProxiedHarness> {
  const schema = await createTestSchema();
  const proxied = await postgresBehindProxy(schema.url);
  let store: PostgresStore | undefined;
  const viaProxy: TestBackend = {
    name: 'postgres',
    async open() {
      store = await PostgresStore.open({
        url: proxied.url,
        poolSize: 4,
        connectTimeoutMs: 1000,
        statementTimeoutMs: 3000,
      });
      const opened = store;
      return { store: opened, databaseUrl: proxied.url, cleanup: () => opened.close() };
    },
  };
  const h = await createHarness({ backend: viaProxy });
  if (store === undefined) throw new Error('the harness did not open its store');
  return {
    h,
    store,
    proxy: proxied.proxy,
    schema,
    async close() {
      await h.close();
      await proxied.proxy.close();
      await schema.drop();
    },
  };
}
