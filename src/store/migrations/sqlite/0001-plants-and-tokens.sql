-- INTEGER PRIMARY KEY is the rowid: a signed 64-bit integer, exactly int64.
CREATE TABLE plants (
  id         INTEGER PRIMARY KEY,
  name       TEXT    NOT NULL,
  tag        TEXT,
  created_at INTEGER NOT NULL
);
-- Serves GET /plants?tag= in id order without a sort.
CREATE INDEX plants_tag_id ON plants (tag, id) WHERE tag IS NOT NULL;

CREATE TABLE tokens (
  id           TEXT    PRIMARY KEY,
  name         TEXT    NOT NULL UNIQUE,
  secret_hash  TEXT    NOT NULL UNIQUE,
  scopes       TEXT    NOT NULL,
  created_at   INTEGER NOT NULL,
  expires_at   INTEGER,
  last_used_at INTEGER,
  revoked_at   INTEGER
);
