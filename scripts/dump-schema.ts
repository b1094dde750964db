/**
 * Writes src/store/schema/<dialect>.sql: the store's schema as it is after every
 * migration, for reading. `npm run schema:dump`; PostgreSQL is reached at
 * PLANTSTORE_TEST_DATABASE_URL (by default the local server's database "test").
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { schemaFilePath, currentSchemaFiles } from './schema/files.js';

const files = await currentSchemaFiles();
for (const [dialect, text] of Object.entries(files)) {
  const path = schemaFilePath(dialect);
  mkdirSync(new URL('.', path), { recursive: true });
  writeFileSync(path, text);
  console.log(`wrote ${path.pathname}`);
}
