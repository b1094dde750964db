/**
 * DATABASE_URL: `sqlite:<path>` or `postgres://user:password@host:port/database`.
 * Messages quote the URL with its password masked: they end up in logs.
 */
import { ConfigError, type Source } from './errors.js';

const DEFAULT_DATABASE_URL = 'sqlite:./data/plantstore.db';

/** The URL with the password of its user-info part replaced by ***. */
export function redacted(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:@/]*:)[^@/]*@/i, '$1***@');
}

function checkPort(name: string, url: string): string {
  // The driver would say only "Invalid URL".
  const port = /^postgres(?:ql)?:\/\/(?:[^@/]*@)?(?:\[[^\]/]*\]|[^:/?#[]*):(\d+)(?:[/?#]|$)/.exec(url)?.[1];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) {
    throw new ConfigError(`${name}: port ${port} is out of range (1 to 65535) (got '${redacted(url)}')`);
  }
  return url;
}

export function databaseUrl(source: Source): string {
  const url = source.DATABASE_URL || DEFAULT_DATABASE_URL;
  if (!/^(sqlite:.+|postgres(ql)?:\/\/.+)$/.test(url)) {
    throw new ConfigError(
      `DATABASE_URL must be sqlite:<path> or postgres://user@host:port/database (got '${redacted(url)}')`,
    );
  }
  return checkPort('DATABASE_URL', url);
}

/** DATABASE_LISTEN_URL: PostgreSQL only, a session for the change stream's LISTEN (unset: DATABASE_URL's). */
export function databaseListenUrl(source: Source): string | undefined {
  const url = source.DATABASE_LISTEN_URL;
  if (url === undefined || url === '') return undefined;
  if (!/^postgres(ql)?:\/\/.+$/.test(url)) {
    throw new ConfigError(`DATABASE_LISTEN_URL must be postgres://user@host:port/database (got '${redacted(url)}')`);
  }
  return checkPort('DATABASE_LISTEN_URL', url);
}
