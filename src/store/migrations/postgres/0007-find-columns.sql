-- Finding and ordering plants (GET /plants?q=&sort=name). The service folds names and
-- tags itself (src/domain/search-text.ts) and keeps the result beside each plant:
-- name_key, what names sort by (COLLATE "C": bytewise, as SQLite compares);
-- name_words and tag_words, the words a search matches. Constant defaults add the
-- columns without rewriting the table; the service fills them for existing plants
-- right after this file, in the same transaction (data-steps.ts).
ALTER TABLE plants
  ADD COLUMN name_key text COLLATE "C" NOT NULL DEFAULT '',
  ADD COLUMN name_words text NOT NULL DEFAULT '',
  ADD COLUMN tag_words text NOT NULL DEFAULT '';

-- A plant's words as a tsvector, taken as they are (array_to_tsvector neither
-- parses nor stems): a search term `mon` is the tsquery 'mon':*, a prefix of a word.
CREATE FUNCTION plant_search_vector(name_words text, tag_words text) RETURNS tsvector
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT array_to_tsvector(array_remove(string_to_array(name_words || ' ' || tag_words, ' '), '')) $$;

-- The key that signs the list's page cursors, so a cursor that was altered or made
-- for another store is refused rather than read. Random, per store (gen_random_uuid
-- draws from the server's strong random source).
CREATE TABLE store_secrets (name text PRIMARY KEY, secret text NOT NULL);
INSERT INTO store_secrets (name, secret) VALUES ('page-cursor', replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''));
