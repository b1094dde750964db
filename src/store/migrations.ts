/**
 * The schema as numbered plain SQL files, one folder per dialect (src/store/migrations/<dialect>/), sharing
 * one numbering: a step has the same number and name in both, or no file where a dialect does not need it.
 * A released file is never edited; each database records what it applied in schema_migrations, so a store
 * from any earlier release continues from where it is. Each store applies what is pending in its own
 * transaction. The build copies the folder beside the compiled modules and the bundle.
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
