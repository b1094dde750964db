/**
 * The PostgreSQL ends of a copy. Each store is first opened as the service opens it (migrations, messages for
 * a bad URL), then the copy uses a plain connection per store with no statement timeout: a chunk may take
 * longer than a request may. The source is REPEATABLE READ, READ ONLY: one snapshot for every chunk. The
 * target locks its tables against writers (EXCLUSIVE allows reads) from the emptiness check to the commit.
 */
import pg from 'pg';
import { redacted } from '../../config/database-url.js';
import { openStore } from '../open-store.js';
import { clientConfig, DEFAULT_POSTGRES_SETTINGS } from '../postgres/pool.js';
import type { CopySource, CopyTarget } from './endpoint.js';
import { CopyError } from './errors.js';
import { PostgresCopyReader } from './postgres-reader.js';
import { PostgresCopyWriter } from './postgres-writer.js';
import type { CopyRows, CopyTable } from './rows.js';

const WRITTEN_TABLES =
  'plants, tokens, store_secrets, webhook_subscriptions, webhook_events, webhook_deliveries, webhook_delivery_attempts';

/** How long the target waits for other sessions' writes to finish before the copy gives up. */
const LOCK_TIMEOUT = '10s';
const LOCK_NOT_AVAILABLE = '55P03';

async function connectMigrated(url: string): Promise<pg.Client> {
  await (await openStore(url)).close();
  const client = new pg.Client(clientConfig({ url, ...DEFAULT_POSTGRES_SETTINGS }));
  // A connection that breaks rejects the query in flight; this keeps the event from crashing the process.
  client.on('error', () => {});
  await client.connect();
  return client;
}

export async function openPostgresSource(url: string): Promise<CopySource> {
  const client = await connectMigrated(url);
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    // The snapshot is taken by the transaction's first statement, not by BEGIN: take it now.
    await client.query('SELECT 1');
  } catch (error) {
    await client.end().catch(() => {});
    throw error;
  }
  return new PostgresSource(client, redacted(url));
}

export async function openPostgresTarget(url: string): Promise<CopyTarget> {
  const client = await connectMigrated(url);
  try {
    await client.query('BEGIN');
    await client.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
    await client.query(`LOCK TABLE ${WRITTEN_TABLES} IN EXCLUSIVE MODE`);
    await client.query('SET LOCAL lock_timeout = DEFAULT');
  } catch (error) {
    await client.end().catch(() => {});
    if (error instanceof Error && 'code' in error && error.code === LOCK_NOT_AVAILABLE) {
      throw new CopyError(
        `--to: another session kept writing to ${redacted(url)} for ${LOCK_TIMEOUT} (is a service running on it? stop it for the copy)`,
      );
    }
    throw error;
  }
  return new PostgresTarget(client, redacted(url));
}

class PostgresSource extends PostgresCopyReader implements CopySource {
  async close(): Promise<void> {
    await this.client.query('COMMIT').catch(() => {});
    await this.client.end().catch(() => {});
  }
}

class PostgresTarget extends PostgresCopyReader implements CopyTarget {
  private readonly writer = new PostgresCopyWriter(this.client);
  private ended = false;

  insert<T extends CopyTable>(table: T, rows: readonly CopyRows[T][]): Promise<void> {
    return this.writer.insert(table, rows);
  }

  clear(): Promise<void> {
    return this.writer.clear();
  }

  raiseVersionCounter(last: bigint): Promise<void> {
    return this.writer.raiseVersionCounter(last);
  }

  async finish(): Promise<void> {
    await this.writer.moveIdentitiesPastCopiedRows();
    await this.writer.renewChangeLogHistory();
  }

  async commit(): Promise<void> {
    await this.client.query('COMMIT');
    this.ended = true;
    await this.writer.analyzePlants();
  }

  async close(): Promise<void> {
    if (!this.ended) await this.client.query('ROLLBACK').catch(() => {});
    this.ended = true;
    await this.client.end().catch(() => {});
  }
}
