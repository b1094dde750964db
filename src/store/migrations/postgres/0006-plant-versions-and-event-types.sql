-- Every plant carries a version, its ETag (GET, PATCH, PUT and POST /plants answer
-- it; If-Match checks it). Versions come from one sequence for the whole store, so a
-- plant deleted and created again never gets back a version it had: an ETag read
-- before the delete cannot match the new plant. Plants that exist now start at 1:
-- a constant default fills them without rewriting the table.
CREATE SEQUENCE plant_versions AS bigint START WITH 2;
ALTER TABLE plants ADD COLUMN version bigint NOT NULL DEFAULT 1;
ALTER TABLE plants ALTER COLUMN version SET DEFAULT nextval('plant_versions');

-- The event types a subscription receives; the subscriptions that existed before
-- event types could be chosen keep receiving plant.created only.
ALTER TABLE webhook_subscriptions ADD COLUMN event_types text[] NOT NULL DEFAULT '{plant.created}';
