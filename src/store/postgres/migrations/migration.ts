/**
 * A PostgreSQL schema change. Migrations are numbered, applied in order, each once,
 * and never edited after release: a change comes as a new, higher-numbered module.
 */
export interface PostgresMigration {
  readonly version: number;
  readonly name: string;
  /** Runs inside the migration transaction, so it must not need to run outside one (no CREATE INDEX CONCURRENTLY). */
  readonly sql: string;
}
