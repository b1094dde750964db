-- The delivery log filtered by plant (GET /webhooks/{id}/deliveries?plantId=) finds the plant's
-- events by this index, then their deliveries by event: its cost follows the plant's events,
-- not the subscription's whole log. The id is compared as decimal text, exact for any int64.
CREATE INDEX webhook_events_plant ON webhook_events (((payload::jsonb) ->> 'id'));
