/**
 * The ends of a copy, by store URL (`sqlite:<path>` or `postgres://...`), each
 * migrated to this build's schema first, as the service would at start-up. Each
 * dialect's module (and driver) is imported only when a URL names it.
 */
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { redacted } from '../../config/database-url.js';
import type { CopySource, CopyTarget } from './endpoint.js';
import { CopyError } from './errors.js';

const SQLITE = 'sqlite:';
const POSTGRES = /^postgres(ql)?:\/\//;

function unsupported(option: string, url: string): CopyError {
  return new CopyError(
    `${option} must be sqlite:<path> or postgres://user@host:port/database (got '${redacted(url)}')`,
  );
}

export async function openSource(url: string): Promise<CopySource> {
  if (url.startsWith(SQLITE)) return (await import('./sqlite-endpoint.js')).openSqliteSource(url.slice(SQLITE.length));
  if (POSTGRES.test(url)) return (await import('./postgres-endpoint.js')).openPostgresSource(url);
  throw unsupported('--from', url);
}

export async function openTarget(url: string): Promise<CopyTarget> {
  if (url.startsWith(SQLITE)) return (await import('./sqlite-endpoint.js')).openSqliteTarget(url.slice(SQLITE.length));
  if (POSTGRES.test(url)) return (await import('./postgres-endpoint.js')).openPostgresTarget(url);
  throw unsupported('--to', url);
}

/** A SQLite file by its real path (links resolved) when it exists. */
function sqliteFile(url: string): string {
  const path = resolve(url.slice(SQLITE.length));
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * Refuses a copy of a store onto itself: with --replace it would empty the store it
 * reads. Catches the same file or the same URL; two URLs that reach one PostgreSQL
 * schema by different names are not caught (the snapshot would still copy it whole).
 */
export function refuseSameStore(from: string, to: string): void {
  const same = from.startsWith(SQLITE) && to.startsWith(SQLITE) ? sqliteFile(from) === sqliteFile(to) : from === to;
  if (same) throw new CopyError(`--from and --to name the same store (${redacted(from)})`);
}
