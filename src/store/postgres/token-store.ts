import type pg from 'pg';
import type { Scope } from '../../domain/scopes.js';
import type { InsertTokenOutcome, NewTokenRecord, TokenRecord, TokenRevocation, TokenStore } from '../types.js';
import { guarded } from './errors.js';
import { inTransaction } from './transaction.js';

interface TokenRow {
  id: string;
  name: string;
  scopes: string[];
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
  created_by: string | null;
}

const COLUMNS = 'id, name, scopes, created_at, expires_at, last_used_at, revoked_at, created_by';

function toRecord(row: TokenRow): TokenRecord {
  return {
    id: row.id,
    name: row.name,
    scopes: row.scopes as Scope[],
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
    createdBy: row.created_by,
  };
}

/**
 * Creating a token by another and revoking one take this transaction lock first, so they run one after another:
 * a revocation's statement then sees every token created before it (and revokes it), and a token created after
 * it sees its creator revoked (and is not stored). Row locks alone could not do it: a revocation's snapshot is
 * taken before it waits, and misses a grandchild inserted meanwhile. Both are rare, so one lock per schema costs
 * nothing that matters; a transaction lock suits a transaction-mode pooler.
 */
const LINEAGE_LOCK = "SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.tokens lineage'))";

const INSERT = {
  name: 'tokens.insert',
  text: `INSERT INTO tokens (id, name, secret_hash, scopes, created_at, expires_at, created_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (name) DO NOTHING`,
};
const CREATOR_ACTIVE = {
  name: 'tokens.creator-active',
  text: 'SELECT 1 FROM tokens WHERE id = $1 AND revoked_at IS NULL',
};
const SELECT_BY_HASH = { name: 'tokens.by-hash', text: `SELECT ${COLUMNS} FROM tokens WHERE secret_hash = $1` };
// COLLATE "C": byte order for the tie-break, as SQLite compares text, whatever the database's locale.
const SELECT_ALL = { name: 'tokens.all', text: `SELECT ${COLUMNS} FROM tokens ORDER BY created_at, id COLLATE "C"` };
/** The token named by id or name, with every token it created, directly or not (tokens_created_by finds them). */
const REVOKE = {
  name: 'tokens.revoke',
  text: `WITH RECURSIVE lineage (id) AS (
           SELECT id FROM tokens WHERE id = $2 OR name = $2
           UNION SELECT tokens.id FROM tokens JOIN lineage ON tokens.created_by = lineage.id
         )
         UPDATE tokens SET revoked_at = coalesce(revoked_at, $1) WHERE id IN (SELECT id FROM lineage)
         RETURNING ${COLUMNS}`,
};
const TOUCH = { name: 'tokens.touch', text: 'UPDATE tokens SET last_used_at = $1 WHERE id = $2' };
const COUNT = { name: 'tokens.count', text: 'SELECT count(*)::integer AS count FROM tokens' };

export class PostgresTokenStore implements TokenStore {
  constructor(private readonly pool: pg.Pool) {}

  async insertToken(token: NewTokenRecord): Promise<InsertTokenOutcome> {
    const values = [
      token.id,
      token.name,
      token.secretHash,
      [...token.scopes],
      token.createdAt,
      token.expiresAt,
      token.createdBy,
    ];
    return this.inLineageLock(async (client) => {
      // A token with no creator (the first-start token, the CLI's) has none to check.
      if (token.createdBy !== null) {
        const active = await client.query({ ...CREATOR_ACTIVE, values: [token.createdBy] });
        if (active.rowCount === 0) return 'creator-revoked';
      }
      return (await client.query({ ...INSERT, values })).rowCount === 1 ? 'inserted' : 'name-taken';
    });
  }

  async findTokenBySecretHash(secretHash: string): Promise<TokenRecord | undefined> {
    const row = await guarded(
      async () => (await this.pool.query<TokenRow>({ ...SELECT_BY_HASH, values: [secretHash] })).rows[0],
    );
    return row === undefined ? undefined : toRecord(row);
  }

  async listTokens(): Promise<TokenRecord[]> {
    return (await guarded(async () => (await this.pool.query<TokenRow>(SELECT_ALL)).rows)).map(toRecord);
  }

  async revokeToken(idOrName: string, at: Date): Promise<TokenRevocation | undefined> {
    const rows = await this.inLineageLock(
      async (client) => (await client.query<TokenRow>({ ...REVOKE, values: [at, idOrName] })).rows,
    );
    const named = rows.find((row) => row.id === idOrName || row.name === idOrName);
    if (named === undefined) return undefined;
    return { token: toRecord(named), descendantIds: rows.filter((row) => row !== named).map((row) => row.id) };
  }

  /** Runs `work` in a transaction holding LINEAGE_LOCK. */
  private async inLineageLock<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, async (client) => {
      await client.query(LINEAGE_LOCK);
      return work(client);
    });
  }

  async recordTokenUse(id: string, at: Date): Promise<void> {
    await guarded(() => this.pool.query({ ...TOUCH, values: [at, id] }));
  }

  async countTokens(): Promise<number> {
    return guarded(async () => (await this.pool.query<{ count: number }>(COUNT)).rows[0]?.count ?? 0);
  }
}
