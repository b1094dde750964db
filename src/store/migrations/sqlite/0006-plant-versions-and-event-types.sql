-- Every plant carries a version, its ETag (GET, PATCH, PUT and POST /plants answer
-- it; If-Match checks it). Versions come from one counter for the whole store, so a
-- plant deleted and created again never gets back a version it had: an ETag read
-- before the delete cannot match the new plant. Plants that exist now start at 1.
ALTER TABLE plants ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
CREATE TABLE plant_version_counter (last INTEGER NOT NULL);
INSERT INTO plant_version_counter (last) VALUES (1);

-- The event types a subscription receives, comma-separated; the subscriptions that
-- existed before event types could be chosen keep receiving plant.created only.
ALTER TABLE webhook_subscriptions ADD COLUMN event_types TEXT NOT NULL DEFAULT 'plant.created';
