-- The find columns (name_key, name_words, tag_words; migration 0007) of existing plants,
-- folded again by the service's current code (src/domain/search-text.ts): it lower-cases
-- after the compatibility decomposition now, so a name with "™", "ℌ" or "𝐁" has other words
-- and another key than it was stored with. The data step (src/store/postgres/data-steps.ts)
-- folds every plant in chunks and gathers the rows whose columns change here, then writes
-- only those back (the indexes over the columns follow).
CREATE TEMP TABLE refolded_plants (
  id bigint PRIMARY KEY,
  name_key text NOT NULL,
  name_words text NOT NULL,
  tag_words text NOT NULL
) ON COMMIT DROP;
