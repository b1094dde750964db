-- Webhook subscriptions and the transactional outbox of their deliveries (see src/webhooks/).

CREATE TABLE webhook_subscriptions (
  id          text        PRIMARY KEY,
  url         text        NOT NULL,
  description text,
  -- In clear: every delivery is signed with it (HMAC needs the key itself).
  secret      text        NOT NULL,
  created_at  timestamptz NOT NULL,
  seq         bigint      GENERATED ALWAYS AS IDENTITY
);

-- The outbox: one row per plant.created event, written in the plant's transaction.
CREATE TABLE webhook_events (
  id         text        PRIMARY KEY,
  type       text        NOT NULL,
  payload    text        NOT NULL,
  created_at timestamptz NOT NULL
);

-- One row per (event, subscription). Dispatchers claim due rows with
-- FOR UPDATE SKIP LOCKED and lease them (lease_*) while they attempt them.
CREATE TABLE webhook_deliveries (
  id              text        PRIMARY KEY,
  event_id        text        NOT NULL REFERENCES webhook_events (id),
  subscription_id text        NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
  status          text        NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempt_count   integer     NOT NULL,
  manual          boolean     NOT NULL,
  next_attempt_at timestamptz,
  lease_owner     text,
  lease_until     timestamptz,
  created_at      timestamptz NOT NULL,
  seq             bigint      GENERATED ALWAYS AS IDENTITY
);
-- The dispatchers' poll: due pending deliveries, oldest due first.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_subscription ON webhook_deliveries (subscription_id, created_at, seq);

CREATE TABLE webhook_delivery_attempts (
  id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  delivery_id     text        NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempt         integer     NOT NULL,
  attempted_at    timestamptz NOT NULL,
  response_status integer,
  latency_ms      integer     NOT NULL,
  error           text
);
CREATE INDEX webhook_delivery_attempts_delivery ON webhook_delivery_attempts (delivery_id, id);
