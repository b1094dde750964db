-- Two additions to the change log (migration 0009) for GET /events.
--
-- The log's history: positions are numbers from 1, so a store restored from a dump, or
-- replaced by `plantstore copy --replace`, hands out again positions a client may
-- already hold from the history it replaced. The history id goes into every event id
-- (`<history>-<position>`): a resume from another history is refused instead of
-- continuing silently. It is read as md5 of the random value stored here (made anew
-- by a copy into the store) and of this table's OID: pg_restore creates the table
-- anew, with a new OID, so a restored database has a history of its own by itself,
-- while a restart, a VACUUM FULL or pg_upgrade (which keeps OIDs) keep it.
-- One row; never copied from another store.
CREATE TABLE plant_change_history (
  one     boolean PRIMARY KEY DEFAULT true CHECK (one),
  history text    NOT NULL
);
INSERT INTO plant_change_history (history) VALUES (md5(random()::text || clock_timestamp()::text));

-- A change's previous tag: a stream filtered by tag also gets the change that takes a
-- plant out of the tag. tag_changed: true for a change that changed the tag
-- (previous_tag is then the one it had, NULL for none); false otherwise, and for the
-- entries made before.
ALTER TABLE plant_changes ADD COLUMN tag_changed boolean NOT NULL DEFAULT false, ADD COLUMN previous_tag text;

-- Migration 0009's function, with each change's previous tag.
CREATE OR REPLACE FUNCTION plant_changes_log() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  types text[];
  ids bigint[];
  tags text[];
  payloads text[];
  tag_changes boolean[];
  previous_tags text[];
  last_position bigint;
BEGIN
  -- The statement's changes in id order: a plant's JSON as the events carry it.
  IF TG_OP = 'INSERT' THEN
    SELECT array_agg('plant.created'::text ORDER BY id), array_agg(id ORDER BY id), array_agg(tag ORDER BY id),
      array_agg('{"id":' || id || ',"name":' || to_json(name)::text || coalesce(',"tag":' || to_json(tag)::text, '') || '}' ORDER BY id)
      INTO types, ids, tags, payloads FROM new_rows;
  ELSIF TG_OP = 'UPDATE' THEN
    -- Only a real change of the plant's content (not a data step rewriting other columns).
    SELECT array_agg('plant.updated'::text ORDER BY n.id), array_agg(n.id ORDER BY n.id), array_agg(n.tag ORDER BY n.id),
      array_agg('{"id":' || n.id || ',"name":' || to_json(n.name)::text || coalesce(',"tag":' || to_json(n.tag)::text, '') || '}' ORDER BY n.id),
      array_agg(o.tag IS DISTINCT FROM n.tag ORDER BY n.id), array_agg(CASE WHEN o.tag IS DISTINCT FROM n.tag THEN o.tag END ORDER BY n.id)
      INTO types, ids, tags, payloads, tag_changes, previous_tags
      FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE (o.name, o.tag) IS DISTINCT FROM (n.name, n.tag);
  ELSE
    SELECT array_agg('plant.deleted'::text ORDER BY id), array_agg(id ORDER BY id), array_agg(tag ORDER BY id), array_agg('{"id":' || id || '}' ORDER BY id)
      INTO types, ids, tags, payloads FROM old_rows;
  END IF;
  IF coalesce(cardinality(ids), 0) = 0 THEN
    RETURN NULL;
  END IF;
  UPDATE plant_change_counter SET last = last + cardinality(ids) RETURNING last INTO last_position;
  -- unnest pads the arrays a create or a delete leaves NULL with NULLs.
  INSERT INTO plant_changes (position, type, plant_id, tag, payload, tag_changed, previous_tag)
    SELECT last_position - cardinality(ids) + c.k, c.type, c.plant_id, c.tag, c.payload, coalesce(c.tag_changed, false), c.previous_tag
    FROM unnest(types, ids, tags, payloads, tag_changes, previous_tags) WITH ORDINALITY AS c(type, plant_id, tag, payload, tag_changed, previous_tag, k);
  PERFORM pg_notify('plant_changes', last_position::text);
  RETURN NULL;
END $$;
