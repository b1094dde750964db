-- The find columns (name_key, name_words, tag_words; migration 0007) of existing plants,
-- folded again by the service's current code (src/domain/search-text.ts): it lower-cases
-- after the compatibility decomposition now, so a name with "™", "ℌ" or "𝐁" has other words
-- and another key than it was stored with. Only the rows whose columns change are written,
-- and the search index (0008, kept by the service's writes since 0010) is told: their old
-- words out, their new words in.
CREATE TEMP TABLE refolded_plants AS
  SELECT id, name_key, name_words, tag_words, old_name_words, old_tag_words FROM (
    SELECT id, plant_name_key(name) AS name_key, plant_search_words(name) AS name_words, plant_search_words(tag) AS tag_words,
      name_key AS old_name_key, name_words AS old_name_words, tag_words AS old_tag_words
    FROM plants
  )
  WHERE name_key IS NOT old_name_key OR name_words IS NOT old_name_words OR tag_words IS NOT old_tag_words;
INSERT INTO plants_search (plants_search, rowid, name_words, tag_words)
  SELECT 'delete', id, old_name_words, old_tag_words FROM refolded_plants ORDER BY id;
UPDATE plants SET name_key = r.name_key, name_words = r.name_words, tag_words = r.tag_words
  FROM refolded_plants AS r WHERE plants.id = r.id;
INSERT INTO plants_search (rowid, name_words, tag_words) SELECT id, name_words, tag_words FROM refolded_plants ORDER BY id;
DROP TABLE refolded_plants;
