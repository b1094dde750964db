import type pg from 'pg';
import type { Scope } from '../../tokens/scopes.js';
import type { NewTokenRecord, TokenRecord, TokenStore } from '../types.js';
import { guarded } from './errors.js';

interface TokenRow {
  id: string;
  name: string;
  scopes: string[];
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

const COLUMNS = 'id, name, scopes, created_at, expires_at, last_used_at, revoked_at';

function toRecord(row: TokenRow): TokenRecord {
  return {
    id: row.id,
    name: row.name,
    scopes: row.scopes as Scope[],
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
}

const INSERT = {
  name: 'tokens.insert',
  text: `INSERT INTO tokens (id, name, secret_hash, scopes, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (name) DO NOTHING`,
};
const SELECT_BY_HASH = { name: 'tokens.by-hash', text: `SELECT ${COLUMNS} FROM tokens WHERE secret_hash = $1` };
// COLLATE "C": byte order for the tie-break, as SQLite compares text, whatever the database's locale.
const SELECT_ALL = { name: 'tokens.all', text: `SELECT ${COLUMNS} FROM tokens ORDER BY created_at, id COLLATE "C"` };
const REVOKE = {
  name: 'tokens.revoke',
  text: `UPDATE tokens SET revoked_at = coalesce(revoked_at, $1) WHERE id = $2 OR name = $2 RETURNING ${COLUMNS}`,
};
const TOUCH = { name: 'tokens.touch', text: 'UPDATE tokens SET last_used_at = $1 WHERE id = $2' };
const COUNT = { name: 'tokens.count', text: 'SELECT count(*)::integer AS count FROM tokens' };

export class PostgresTokenStore implements TokenStore {
  constructor(private readonly pool: pg.Pool) {}

  async insertToken(token: NewTokenRecord): Promise<boolean> {
    const values = [token.id, token.name, token.secretHash, [...token.scopes], token.createdAt, token.expiresAt];
    return guarded(async () => (await this.pool.query({ ...INSERT, values })).rowCount === 1);
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

  async revokeToken(idOrName: string, at: Date): Promise<TokenRecord | undefined> {
    const row = await guarded(
      async () => (await this.pool.query<TokenRow>({ ...REVOKE, values: [at, idOrName] })).rows[0],
    );
    return row === undefined ? undefined : toRecord(row);
  }

  async recordTokenUse(id: string, at: Date): Promise<void> {
    await guarded(() => this.pool.query({ ...TOUCH, values: [at, id] }));
  }

  async countTokens(): Promise<number> {
    return guarded(async () => (await this.pool.query<{ count: number }>(COUNT)).rows[0]?.count ?? 0);
  }
}
