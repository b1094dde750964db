-- A subscription can be changed (PATCH /webhooks/{id}) and disabled. version counts
-- its changes (its ETag); a disabled one keeps receiving its events in the outbox,
-- which are sent once it is enabled again. failing_since: when its attempts started
-- failing (the first failed attempt since the last success); a subscription failing for
-- WEBHOOK_DISABLE_AFTER is disabled. NULL while healthy. Constant defaults rewrite nothing.
ALTER TABLE webhook_subscriptions
  ADD COLUMN version integer NOT NULL DEFAULT 1,
  ADD COLUMN enabled boolean NOT NULL DEFAULT true,
  ADD COLUMN disabled_at timestamptz,
  ADD COLUMN disabled_reason text,
  ADD COLUMN failing_since timestamptz;
