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

-- Recoveries (POST /webhooks/{id}/recover): re-queue a window's failed deliveries in
-- batches, walking them once in (created_at, id) order from a cursor, so a batch is short
-- and a recovery interrupted by a restart is continued where it stopped. One per window
-- (window_key: since and until as asked), so asking again answers the same recovery.
CREATE TABLE webhook_recoveries (
  id              text        PRIMARY KEY,
  subscription_id text        NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
  window_key      text        NOT NULL,
  since           timestamptz NOT NULL,
  until           timestamptz NOT NULL,
  status          text        NOT NULL CHECK (status IN ('running', 'done')),
  requeued        integer     NOT NULL DEFAULT 0,
  cursor_at       timestamptz,
  cursor_id       text,
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL,
  finished_at     timestamptz,
  UNIQUE (subscription_id, window_key)
);

-- The head of each attempt's response (its first 1 KiB, and its Content-Type), for the delivery log.
ALTER TABLE webhook_delivery_attempts ADD COLUMN response_body text, ADD COLUMN response_content_type text;
