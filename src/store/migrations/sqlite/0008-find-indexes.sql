-- sort=name and sort=-name in pages of any depth: an index range from the cursor on.
CREATE INDEX plants_name_key ON plants (name_key, id);

-- The search index: FTS5 over the words the service computed. The ascii tokenizer
-- splits only at ASCII spaces and punctuation, so its tokens are exactly those
-- words (the service already folded case and marks). detail=none: a search needs
-- only which plants hold a word, not where. prefix: each word's first 1 to 5
-- characters are indexed too, so prefix queries read lists lazily rather than merge
-- every matching word's list first (plant-find.ts). External content: the words
-- stay in plants; the triggers keep the index in step in the plant write's
-- transaction.
CREATE VIRTUAL TABLE plants_search USING fts5 (
  name_words, tag_words, content = 'plants', content_rowid = 'id', tokenize = 'ascii', detail = 'none', columnsize = 0, prefix = '1 2 3 4 5'
);
INSERT INTO plants_search (plants_search) VALUES ('rebuild');
CREATE TRIGGER plants_search_insert AFTER INSERT ON plants BEGIN
  INSERT INTO plants_search (rowid, name_words, tag_words) VALUES (new.id, new.name_words, new.tag_words);
END;
CREATE TRIGGER plants_search_delete AFTER DELETE ON plants BEGIN
  INSERT INTO plants_search (plants_search, rowid, name_words, tag_words) VALUES ('delete', old.id, old.name_words, old.tag_words);
END;
-- A change that leaves the words as they were (a rename in another case) leaves the index alone.
CREATE TRIGGER plants_search_update AFTER UPDATE OF name_words, tag_words ON plants
  WHEN old.name_words IS NOT new.name_words OR old.tag_words IS NOT new.tag_words BEGIN
  INSERT INTO plants_search (plants_search, rowid, name_words, tag_words) VALUES ('delete', old.id, old.name_words, old.tag_words);
  INSERT INTO plants_search (rowid, name_words, tag_words) VALUES (new.id, new.name_words, new.tag_words);
END;
