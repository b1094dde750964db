-- A subscription's tag filter: plant events go to it only when the plant has the tag after the
-- change or had it before (NULL: every plant). The outbox's events carry both tags, so the
-- deliveries written with an event are chosen by them; NULL on events that are not about a plant.
ALTER TABLE webhook_subscriptions ADD COLUMN tag text;
ALTER TABLE webhook_events ADD COLUMN tag text, ADD COLUMN previous_tag text;
