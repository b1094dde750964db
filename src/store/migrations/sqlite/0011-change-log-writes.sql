-- The change log (migration 0009) is no longer written by triggers: the service's
-- plant writes append to it themselves, a transaction's changes in one statement
-- (src/store/sqlite/change-log-writes.ts says why). The log's content stays as it
-- is: until now the triggers wrote it.
DROP TRIGGER plant_changes_insert;
DROP TRIGGER plant_changes_update;
DROP TRIGGER plant_changes_delete;
