-- Finding and ordering plants (GET /plants?q=&sort=name). The service folds names and
-- tags itself (src/domain/search-text.ts) and keeps the result beside each plant:
-- name_key, what names sort by; name_words and tag_words, the words a search matches.
-- Existing plants are filled here by the same code, which the migration connection
-- provides as SQL functions (sqlite-store.ts, findFunctions).
ALTER TABLE plants ADD COLUMN name_key TEXT NOT NULL DEFAULT '';
ALTER TABLE plants ADD COLUMN name_words TEXT NOT NULL DEFAULT '';
ALTER TABLE plants ADD COLUMN tag_words TEXT NOT NULL DEFAULT '';
UPDATE plants SET name_key = plant_name_key(name), name_words = plant_search_words(name), tag_words = plant_search_words(tag);

-- The key that signs the list's page cursors, so a cursor that was altered or made
-- for another store is refused rather than read. Random, per store.
CREATE TABLE store_secrets (name TEXT PRIMARY KEY, secret TEXT NOT NULL);
INSERT INTO store_secrets (name, secret) VALUES ('page-cursor', lower(hex(randomblob(32))));
