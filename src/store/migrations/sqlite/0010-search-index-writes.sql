-- The search index (migration 0008) is no longer kept by triggers: the service's
-- writes add to it and remove from it themselves, a batch of writes in two
-- statements (src/store/sqlite/search-index.ts says why). The index's content
-- stays as it is: until now the triggers kept it exactly in step.
DROP TRIGGER plants_search_insert;
DROP TRIGGER plants_search_delete;
DROP TRIGGER plants_search_update;
