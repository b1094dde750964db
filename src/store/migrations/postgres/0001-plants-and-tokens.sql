-- The schema of the embedded store, in PostgreSQL types.

-- bigint is exactly int64: every id from -2^63 to 2^63-1.
CREATE TABLE plants (
  id         bigint      PRIMARY KEY,
  name       text        NOT NULL,
  tag        text,
  created_at timestamptz NOT NULL DEFAULT now()
);
-- Serves GET /plants?tag= in id order without a sort.
CREATE INDEX plants_tag_id ON plants (tag, id) WHERE tag IS NOT NULL;

CREATE TABLE tokens (
  id           text        PRIMARY KEY,
  name         text        NOT NULL UNIQUE,
  secret_hash  text        NOT NULL UNIQUE,
  scopes       text[]      NOT NULL,
  created_at   timestamptz NOT NULL,
  expires_at   timestamptz,
  last_used_at timestamptz,
  revoked_at   timestamptz
);
