-- The secret a rotation replaced, still signing deliveries (beside the new one)
-- until previous_secret_expires_at, so receivers can switch without a gap.
ALTER TABLE webhook_subscriptions ADD COLUMN previous_secret TEXT;
ALTER TABLE webhook_subscriptions ADD COLUMN previous_secret_expires_at INTEGER;
