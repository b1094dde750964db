-- Which token created a token (POST /tokens): revoking a token revokes those it created, directly or not,
-- found through this index. NULL for the first-start token and the CLI's, and for every token made before.
ALTER TABLE tokens ADD COLUMN created_by TEXT;
CREATE INDEX tokens_created_by ON tokens (created_by);
