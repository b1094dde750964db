-- The retention job (src/webhooks/retention.ts) walks events oldest first and
-- finds each one's deliveries: without these it would scan both tables whole
-- on every chunk (the second also serves the foreign key check each deleted
-- event makes). The rowid in each index entry keeps ties in insertion order.
CREATE INDEX webhook_events_created_at ON webhook_events (created_at);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);
