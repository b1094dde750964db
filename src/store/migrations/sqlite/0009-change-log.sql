-- The change log GET /events streams: every create, change and delete of a plant,
-- numbered by its position. Triggers write it in the same transaction as the change,
-- whatever path made it (create, PATCH/PUT, DELETE, import). SQLite has one writer at
-- a time, so positions are taken in commit order; AUTOINCREMENT never reuses one, even
-- after old entries are pruned (retention), and a rolled-back change takes none: the
-- positions that exist are consecutive from the oldest kept to the newest.
-- payload: the event's JSON, as webhooks carry it; tag: the plant's (its last, for a
-- delete), for the tag filter.
CREATE TABLE plant_changes (
  position   INTEGER PRIMARY KEY AUTOINCREMENT,
  type       TEXT    NOT NULL,
  plant_id   INTEGER NOT NULL,
  tag        TEXT,
  payload    TEXT    NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX plant_changes_created_at ON plant_changes (created_at);

CREATE TRIGGER plant_changes_insert AFTER INSERT ON plants BEGIN
  INSERT INTO plant_changes (type, plant_id, tag, payload, created_at)
  VALUES ('plant.created', new.id, new.tag, new.json, CAST(unixepoch('subsec') * 1000 AS INTEGER));
END;
-- Only a real change of the plant's content: the find migrations' data steps, or any
-- rewrite of other columns, are not changes of the plant.
CREATE TRIGGER plant_changes_update AFTER UPDATE OF name, tag ON plants
  WHEN old.name IS NOT new.name OR old.tag IS NOT new.tag BEGIN
  INSERT INTO plant_changes (type, plant_id, tag, payload, created_at)
  VALUES ('plant.updated', new.id, new.tag, new.json, CAST(unixepoch('subsec') * 1000 AS INTEGER));
END;
CREATE TRIGGER plant_changes_delete AFTER DELETE ON plants BEGIN
  INSERT INTO plant_changes (type, plant_id, tag, payload, created_at)
  VALUES ('plant.deleted', old.id, old.tag, '{"id":' || old.id || '}', CAST(unixepoch('subsec') * 1000 AS INTEGER));
END;
