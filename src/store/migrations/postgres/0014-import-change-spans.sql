-- An import's change-log entries as one span of positions.
--
-- Positions are taken in commit order under the change counter's row lock (0009), so
-- whatever a writer does between taking it and committing, every other writer on every
-- instance waits for. An import of a million plants has a million entries: written as
-- rows of plant_changes under that lock, they would stall every write for seconds.
-- Instead an import writes its entries before it takes the lock, numbered 1..count
-- within its span (plant_change_span_entries), and under the lock takes `count`
-- positions at once and records only where its span starts (plant_change_spans): the
-- entry numbered k is at position first_position + k - 1. Readers see plant_changes
-- and the spans as one log (src/store/postgres/change-log.ts).
CREATE SEQUENCE plant_change_span_ids;
CREATE TABLE plant_change_span_entries (
  span     bigint NOT NULL,
  k        bigint NOT NULL,
  type     text   NOT NULL,
  plant_id bigint NOT NULL,
  tag      text,
  payload  text   NOT NULL,
  PRIMARY KEY (span, k)
);
CREATE TABLE plant_change_spans (
  span           bigint      PRIMARY KEY,
  first_position bigint      NOT NULL UNIQUE,
  last_position  bigint      NOT NULL UNIQUE,
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX plant_change_spans_created_at ON plant_change_spans (created_at);

-- The import inserts its plants with this set for its transaction, so that the insert
-- trigger does not log them one by one (and take the counter) as well.
DROP TRIGGER plant_changes_insert ON plants;
CREATE TRIGGER plant_changes_insert AFTER INSERT ON plants REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT WHEN (current_setting('plantstore.change_log', true) IS DISTINCT FROM 'span')
  EXECUTE FUNCTION plant_changes_log();
