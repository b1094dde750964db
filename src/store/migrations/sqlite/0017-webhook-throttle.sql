-- A subscription can be throttled: at most max_per_second deliveries started in any one
-- second (NULL: unlimited). The claim that leases deliveries counts them on the row:
-- throttle_count deliveries were started since the last pause of a second or more, the
-- latest at throttle_last_at (ms); a new run of max_per_second may start only once a second
-- has passed since that one.
ALTER TABLE webhook_subscriptions ADD COLUMN max_per_second INTEGER CHECK (max_per_second > 0);
ALTER TABLE webhook_subscriptions ADD COLUMN throttle_last_at INTEGER;
ALTER TABLE webhook_subscriptions ADD COLUMN throttle_count INTEGER NOT NULL DEFAULT 0;

-- Each subscription's due deliveries, oldest due first: the claim takes a few of each
-- subscription's, so one subscription's backlog never fills a claim.
CREATE INDEX webhook_deliveries_subscription_due ON webhook_deliveries (subscription_id, next_attempt_at)
  WHERE status = 'pending';
