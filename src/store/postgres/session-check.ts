/**
 * A set-up behind a pooler in transaction mode that the store was not told about would misbehave silently: LISTEN
 * on a connection the pooler lends to others, named statements on the wrong server connection. So at start the
 * store checks each URL that needs sessions: a setting made on one connection must stay on it and must not be seen
 * from another. Through a transaction pooler the server connection that made it goes back to the pool after the
 * statement and is lent next (PgBouncer lends the most recently used one) to the other client, which then sees
 * it; or the first client is given another server connection and no longer sees its own. Either way the
 * start is refused with an error naming the setting to change.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { ConfigError } from '../../config/errors.js';
import { redacted } from '../../config/database-url.js';
import { guarded } from './errors.js';
import { clientConfig, type PostgresConnectionSettings } from './pool.js';

const PROBE = 'plantstore.session_probe';
/** Other clients of the pooler may take the server connection in between: a few rounds make a miss unlikely. */
const ROUNDS = 3;

async function seen(client: pg.Client): Promise<string | null> {
  const { rows } = await client.query<{ value: string | null }>(
    `SELECT nullif(current_setting('${PROBE}', true), '') AS value`,
  );
  return rows[0]?.value ?? null;
}

/** Whether `url` leads to a pooler in transaction (or statement) mode: session state does not stay with a client. */
export async function sessionsArePooled(settings: PostgresConnectionSettings, url: string): Promise<boolean> {
  const clients = [new pg.Client(clientConfig(settings, url)), new pg.Client(clientConfig(settings, url))] as const;
  const [first, second] = clients;
  for (const client of clients) client.on('error', () => {}); // a broken connection rejects the query in flight
  try {
    await guarded(() => Promise.all(clients.map((client) => client.connect())));
    for (let round = 0; round < ROUNDS; round++) {
      const token = randomBytes(8).toString('hex');
      await guarded(() => first.query(`SELECT set_config('${PROBE}', $1, false)`, [token]));
      const other = await guarded(() => seen(second));
      const own = await guarded(() => seen(first));
      if (other === token || own !== token) return true;
    }
    return false;
  } finally {
    await Promise.all(clients.map((client) => client.end().catch(() => {})));
  }
}

/** Refuses DATABASE_URL or DATABASE_LISTEN_URL when what it reaches does not fit what the store was told. */
export async function checkSessions(settings: PostgresConnectionSettings): Promise<void> {
  if (settings.pooler === 'none' && (await sessionsArePooled(settings, settings.url))) {
    throw new ConfigError(
      `DATABASE_URL ('${redacted(settings.url)}') reaches a pooler in transaction mode (a session's state does not ` +
        'stay with it): set DATABASE_POOLER=transaction, and DATABASE_LISTEN_URL to a direct connection to PostgreSQL',
    );
  }
  const listenUrl = settings.listenUrl;
  if (settings.pooler === 'transaction' && listenUrl === undefined) {
    throw new ConfigError(
      'DATABASE_LISTEN_URL must be set when DATABASE_POOLER=transaction: the change stream LISTENs on a session, ' +
        'which a pooler in transaction mode does not keep (point it at PostgreSQL directly, or at a session-mode pool)',
    );
  }
  if (listenUrl !== undefined && (await sessionsArePooled(settings, listenUrl))) {
    throw new ConfigError(
      `DATABASE_LISTEN_URL ('${redacted(listenUrl)}') reaches a pooler in transaction mode: the change stream ` +
        'LISTENs on a session of its own; point it at PostgreSQL directly (or at a pooler in session mode)',
    );
  }
}
