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

-- Recoveries (POST /webhooks/{id}/recover): re-queue a window's failed deliveries in
-- batches, walking them once in (created_at, id) order from a cursor, so a batch is short
-- and a recovery interrupted by a restart is continued where it stopped. One per window
-- (window_key: since and until as asked), so asking again answers the same recovery.
CREATE TABLE webhook_recoveries (
  id              TEXT    PRIMARY KEY,
  subscription_id TEXT    NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
  window_key      TEXT    NOT NULL,
  since           INTEGER NOT NULL,
  until           INTEGER NOT NULL,
  status          TEXT    NOT NULL CHECK (status IN ('running', 'done')),
  requeued        INTEGER NOT NULL DEFAULT 0,
  cursor_at       INTEGER,
  cursor_id       TEXT,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL,
  finished_at     INTEGER,
  UNIQUE (subscription_id, window_key)
);

-- The head of each attempt's response (its first 1 KiB, and its Content-Type), for the delivery log.
ALTER TABLE webhook_delivery_attempts ADD COLUMN response_body TEXT;
ALTER TABLE webhook_delivery_attempts ADD COLUMN response_content_type TEXT;
