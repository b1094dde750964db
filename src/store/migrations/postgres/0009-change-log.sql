-- The change log GET /events streams: every create, change and delete of a plant,
-- numbered by its position. Statement-level triggers write it in the same
-- transaction as the change, whatever path made it (create, PATCH/PUT, DELETE, import).
--
-- Positions are taken in COMMIT order, which a sequence cannot promise (a transaction
-- holding 41 may commit after 42 was read, and a reader past 42 would never see 41):
-- each writing statement takes its positions from one counter row, whose row lock it
-- then holds until it commits. The next writer waits for that lock, so it can take
-- positions only after the one before has committed (and become visible). A reader
-- that sees position N thus sees every position below it; positions that exist are
-- consecutive. The price: writers' commits are serialised on the counter row (one
-- short wait per statement, and statements carry whole batches).
--
-- A notification at commit tells every instance's streams (LISTEN plant_changes).
CREATE TABLE plant_changes (
  position   bigint      PRIMARY KEY,
  type       text        NOT NULL,
  plant_id   bigint      NOT NULL,
  tag        text,
  payload    text        NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX plant_changes_created_at ON plant_changes (created_at);
CREATE TABLE plant_change_counter (last bigint NOT NULL);
INSERT INTO plant_change_counter (last) VALUES (0);

-- SET search_path FROM CURRENT: the function finds this schema's tables whatever the
-- search_path of the session that writes a plant (an operator's psql, a seed script).
CREATE FUNCTION plant_changes_log() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  types text[];
  ids bigint[];
  tags text[];
  payloads text[];
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
      array_agg('{"id":' || n.id || ',"name":' || to_json(n.name)::text || coalesce(',"tag":' || to_json(n.tag)::text, '') || '}' ORDER BY n.id)
      INTO types, ids, tags, payloads FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE (o.name, o.tag) IS DISTINCT FROM (n.name, n.tag);
  ELSE
    SELECT array_agg('plant.deleted'::text ORDER BY id), array_agg(id ORDER BY id), array_agg(tag ORDER BY id), array_agg('{"id":' || id || '}' ORDER BY id)
      INTO types, ids, tags, payloads FROM old_rows;
  END IF;
  IF coalesce(cardinality(ids), 0) = 0 THEN
    RETURN NULL;
  END IF;
  UPDATE plant_change_counter SET last = last + cardinality(ids) RETURNING last INTO last_position;
  INSERT INTO plant_changes (position, type, plant_id, tag, payload)
    SELECT last_position - cardinality(ids) + c.k, c.type, c.plant_id, c.tag, c.payload
    FROM unnest(types, ids, tags, payloads) WITH ORDINALITY AS c(type, plant_id, tag, payload, k);
  PERFORM pg_notify('plant_changes', last_position::text);
  RETURN NULL;
END $$;

CREATE TRIGGER plant_changes_insert AFTER INSERT ON plants REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION plant_changes_log();
CREATE TRIGGER plant_changes_update AFTER UPDATE ON plants REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION plant_changes_log();
CREATE TRIGGER plant_changes_delete AFTER DELETE ON plants REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION plant_changes_log();
