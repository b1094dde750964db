/**
 * The schema, as numbered plain SQL files, one folder per dialect:
 *
 *   src/store/migrations/sqlite/0001-plants-and-tokens.sql
 *   src/store/migrations/postgres/0001-plants-and-tokens.sql
 *
 * Both dialects share one numbering: a step has the same number and name in both
 * (its name is the file's, `0003-webhook-retention` -> "webhook retention"); a step
 * one dialect does not need has no file there. A released file is never edited: a
 * change comes as a new, higher-numbered file. Each database records what it has
 * applied in schema_migrations (version, name), so a store created by any earlier
 * release continues from where it is.
 *
 * This module reads the files and decides what is pending; each store applies
 * that in its own transaction (sqlite-store.ts, postgres/migrator.ts). The files
 * ship beside the code that reads them: the build copies this folder next to the
 * compiled modules and next to the bundle (scripts/bundle-service.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { refuseNewerStore } from './errors.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Migration {
  readonly version: number;
  readonly name: string;
  /** Runs inside the migration's transaction (so, on PostgreSQL, no CREATE INDEX CONCURRENTLY). */
  readonly sql: string;
}

const FILE_NAME = /^(\d{4})-([a-z0-9-]+)\.sql$/;

/** Every migration of a dialect, in version order. */
export function migrationsOf(dialect: Dialect): readonly Migration[] {
  const folder = new URL(`./migrations/${dialect}/`, import.meta.url);
  return readdirSync(folder)
    .flatMap((file) => {
      const match = FILE_NAME.exec(file);
      if (match === null) return [];
      const [, number = '', slug = ''] = match;
      return [
        { version: Number(number), name: slug.replaceAll('-', ' '), sql: readFileSync(new URL(file, folder), 'utf8') },
      ];
    })
    .sort((a, b) => a.version - b.version);
}

/**
 * The migrations still to apply, in order, given what the store has applied;
 * refuses (StoreTooNewError) a store that a newer release has migrated further.
 */
export function pendingMigrations(all: readonly Migration[], applied: Iterable<number>, where: string): Migration[] {
  const done = new Set(applied);
  refuseNewerStore(where, done, all);
  return all.filter((migration) => !done.has(migration.version));
}
