/**
 * The service's folding (src/domain/search-text.ts) as SQL functions of a SQLite
 * connection, for migration 0007 to fill the find columns of existing plants in one
 * UPDATE. Plant writes compute the same columns in JS (batch-writer.ts); nothing in
 * the schema (no trigger, no index) calls these, so the file stays readable and
 * writable by any SQLite, without the service.
 */
import type Database from 'better-sqlite3';
import { nameKey, searchWords } from '../../domain/search-text.js';

export function registerFindFunctions(db: Database.Database): void {
  db.function('plant_name_key', { deterministic: true }, (name: unknown) => nameKey(String(name)));
  db.function('plant_search_words', { deterministic: true }, (text: unknown) =>
    typeof text === 'string' ? searchWords(text) : '',
  );
}
