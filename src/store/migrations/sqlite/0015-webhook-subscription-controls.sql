-- A subscription can be changed (PATCH /webhooks/{id}) and disabled. version counts
-- its changes (its ETag); a disabled one keeps receiving its events in the outbox,
-- which are sent once it is enabled again. (No step 14 on SQLite: that number is a
-- PostgreSQL-only step, and a number names one step in both dialects.)
ALTER TABLE webhook_subscriptions ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
ALTER TABLE webhook_subscriptions ADD COLUMN enabled INTEGER NOT NULL DEFAULT 1;
ALTER TABLE webhook_subscriptions ADD COLUMN disabled_at INTEGER;
ALTER TABLE webhook_subscriptions ADD COLUMN disabled_reason TEXT;
-- When its attempts started failing (the first failed attempt since the last success):
-- a subscription failing for WEBHOOK_DISABLE_AFTER is disabled. NULL while healthy.
ALTER TABLE webhook_subscriptions ADD COLUMN failing_since INTEGER;
