/**
 * The checked-in schema files (src/store/schema/<dialect>.sql) match what the
 * migrations build: a fresh store of each dialect, migrated, then dumped.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { currentPostgresSchemaFile, currentSqliteSchemaFile, schemaFilePath } from '../../scripts/schema/files.js';
import { postgresAvailable } from '../support/backends.js';
import { POSTGRES_TEST_URL } from '../support/postgres.js';

function assertCheckedIn(dialect: 'sqlite' | 'postgres', current: string): void {
  const path = schemaFilePath(dialect);
  const checkedIn = readFileSync(path, 'utf8');
  assert.ok(
    checkedIn === current,
    `src/store/schema/${dialect}.sql differs from a freshly migrated store's schema: run \`npm run schema:dump\` ` +
      'and commit the result',
  );
}

describe('checked-in schema files', () => {
  it('sqlite: src/store/schema/sqlite.sql is the schema after every migration', () => {
    assertCheckedIn('sqlite', currentSqliteSchemaFile());
  });

  const skip = !postgresAvailable();
  it('postgres: src/store/schema/postgres.sql is the schema after every migration', { skip }, async () => {
    assertCheckedIn('postgres', await currentPostgresSchemaFile(POSTGRES_TEST_URL));
  });
});
