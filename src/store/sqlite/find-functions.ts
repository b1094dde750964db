/**
 * The service's folding as SQL functions, for migration 0007 to fill existing plants' find columns in one
 * UPDATE. Nothing in the schema calls them, so the file stays usable by any SQLite without the service.
 */
import type Database from 'better-sqlite3';
import { nameKey, searchWords } from '../../domain/search-text.js';

export function registerFindFunctions(db: Database.Database): void {
  db.function('plant_name_key', { deterministic: true }, (name: unknown) => nameKey(String(name)));
  db.function('plant_search_words', { deterministic: true }, (text: unknown) =>
    typeof text === 'string' ? searchWords(text) : '',
  );
}
