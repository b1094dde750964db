-- Two additions to the change log (migration 0009) for GET /events.
--
-- The log's history: positions are numbers from 1, so a store restored from a backup,
-- or replaced by `plantstore copy --replace`, hands out again positions a client may
-- already hold from the history it replaced. The history id, a random value made here
-- for a new store and made anew by `plantstore restore` and by a copy into the store,
-- goes into every event id (`<history>-<position>`): a resume from another history is
-- refused instead of continuing silently. One row; never copied from another store.
CREATE TABLE change_log_history (
  one     INTEGER PRIMARY KEY CHECK (one = 1),
  history TEXT    NOT NULL
);
INSERT INTO change_log_history (one, history) VALUES (1, lower(hex(randomblob(8))));

-- A change's previous tag: a stream filtered by tag also gets the change that takes a
-- plant out of the tag. tag_changed: 1 for a change that changed the tag (previous_tag
-- is then the one it had, NULL for none); 0 otherwise, and for the entries made before.
ALTER TABLE plant_changes ADD COLUMN tag_changed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE plant_changes ADD COLUMN previous_tag TEXT;
