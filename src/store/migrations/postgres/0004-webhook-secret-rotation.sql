-- The secret a rotation replaced (POST /webhooks/{id}/rotate-secret), still signing
-- deliveries beside the new one until previous_secret_expires_at, so receivers can
-- switch without a gap. Adding nullable columns without a default rewrites nothing.

ALTER TABLE webhook_subscriptions ADD COLUMN previous_secret text;
ALTER TABLE webhook_subscriptions ADD COLUMN previous_secret_expires_at timestamptz;
