/** Where the checked-in schema files live, and what they should hold now. */
import { DEFAULT_POSTGRES_URL, freshPostgresSchema } from './postgres.js';
import { freshSqliteSchema } from './sqlite.js';
import { schemaFile } from './text.js';

export type SchemaDialect = 'sqlite' | 'postgres';

export function schemaFilePath(dialect: string): URL {
  return new URL(`../../src/store/schema/${dialect}.sql`, import.meta.url);
}

export function postgresUrl(): string {
  return process.env.PLANTSTORE_TEST_DATABASE_URL || DEFAULT_POSTGRES_URL;
}

export function currentSqliteSchemaFile(): string {
  return schemaFile('sqlite', freshSqliteSchema());
}

export async function currentPostgresSchemaFile(url = postgresUrl()): Promise<string> {
  return schemaFile('postgres', await freshPostgresSchema(url));
}

export async function currentSchemaFiles(): Promise<Record<SchemaDialect, string>> {
  return { sqlite: currentSqliteSchemaFile(), postgres: await currentPostgresSchemaFile() };
}
