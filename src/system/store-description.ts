/**
 * Which store a process uses, for its start-up log: the SQLite file, or the PostgreSQL host and
 * database. Never the user's password, nor the rest of the URL (its query may carry secrets too).
 */
import { resolve } from 'node:path';

export interface StoreDescription {
  readonly kind: 'sqlite' | 'postgres';
  /** SQLite: the file's absolute path. */
  readonly path?: string;
  /** PostgreSQL: host[:port], the database and the user. */
  readonly host?: string;
  readonly database?: string;
  readonly user?: string;
}

export function describeStore(databaseUrl: string): StoreDescription {
  if (databaseUrl.startsWith('sqlite:')) return { kind: 'sqlite', path: resolve(databaseUrl.slice('sqlite:'.length)) };
  try {
    const url = new URL(databaseUrl);
    return {
      kind: 'postgres',
      host: url.host || '(default)',
      database: decodeURIComponent(url.pathname.slice(1)) || '(default)',
      ...(url.username === '' ? {} : { user: decodeURIComponent(url.username) }),
    };
  } catch {
    return { kind: 'postgres' };
  }
}
