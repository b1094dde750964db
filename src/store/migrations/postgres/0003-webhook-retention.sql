-- Indexes for the retention job (src/webhooks/retention.ts): events oldest first,
-- and each event's deliveries. The second one also serves the foreign key check
-- that deleting an event makes on webhook_deliveries, which would otherwise scan
-- the whole table once per deleted event.

CREATE INDEX webhook_events_created_at ON webhook_events (created_at, id);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);
