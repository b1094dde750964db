-- The delivery log filtered by plant (GET /webhooks/{id}/deliveries?plantId=) finds the plant's
-- events by this index, then their deliveries by event: its cost follows the plant's events,
-- not the subscription's whole log. Events not about a plant (webhook.disabled) index NULL.
CREATE INDEX webhook_events_plant ON webhook_events (json_extract(payload, '$.id'));
