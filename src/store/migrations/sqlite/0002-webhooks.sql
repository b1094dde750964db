CREATE TABLE webhook_subscriptions (
  id          TEXT    PRIMARY KEY,
  url         TEXT    NOT NULL,
  description TEXT,
  -- In clear: every delivery is signed with it (HMAC needs the key itself).
  secret      TEXT    NOT NULL,
  created_at  INTEGER NOT NULL
);

-- The outbox: one row per plant.created event, written in the plant's transaction.
CREATE TABLE webhook_events (
  id         TEXT    PRIMARY KEY,
  type       TEXT    NOT NULL,
  payload    TEXT    NOT NULL,
  created_at INTEGER NOT NULL
);

-- One row per (event, subscription). lease_* keep other dispatchers off a
-- delivery being attempted; a lease that outlives its dispatcher just expires.
CREATE TABLE webhook_deliveries (
  id              TEXT    PRIMARY KEY,
  event_id        TEXT    NOT NULL REFERENCES webhook_events (id),
  subscription_id TEXT    NOT NULL REFERENCES webhook_subscriptions (id),
  status          TEXT    NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempt_count   INTEGER NOT NULL,
  manual          INTEGER NOT NULL,
  next_attempt_at INTEGER,
  lease_owner     TEXT,
  lease_until     INTEGER,
  created_at      INTEGER NOT NULL
);
-- The dispatcher's poll: due pending deliveries, oldest due first.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_subscription ON webhook_deliveries (subscription_id, created_at);

CREATE TABLE webhook_delivery_attempts (
  id              INTEGER PRIMARY KEY,
  delivery_id     TEXT    NOT NULL REFERENCES webhook_deliveries (id),
  attempt         INTEGER NOT NULL,
  attempted_at    INTEGER NOT NULL,
  response_status INTEGER,
  latency_ms      INTEGER NOT NULL,
  error           TEXT
);
CREATE INDEX webhook_delivery_attempts_delivery ON webhook_delivery_attempts (delivery_id, id);
