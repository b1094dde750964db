import type Database from 'better-sqlite3';
import type { NewTokenRecord, TokenRecord, TokenStore } from '../types.js';
import type { Scope } from '../../tokens/scopes.js';
import { guarded } from './errors.js';

interface TokenRow {
  id: string;
  name: string;
  scopes: string;
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
  revoked_at: number | null;
}

const COLUMNS = 'id, name, scopes, created_at, expires_at, last_used_at, revoked_at';
const toDate = (ms: number | null): Date | null => (ms === null ? null : new Date(ms));

function toRecord(row: TokenRow): TokenRecord {
  return {
    id: row.id,
    name: row.name,
    scopes: row.scopes.split(',') as Scope[],
    createdAt: new Date(row.created_at),
    expiresAt: toDate(row.expires_at),
    lastUsedAt: toDate(row.last_used_at),
    revokedAt: toDate(row.revoked_at),
  };
}

export class SqliteTokenStore implements TokenStore {
  private readonly insert: Database.Statement;
  private readonly selectByHash: Database.Statement;
  private readonly selectAll: Database.Statement;
  private readonly revoke: Database.Statement;
  private readonly touch: Database.Statement;
  private readonly count: Database.Statement;

  constructor(db: Database.Database) {
    this.insert = db.prepare(
      `INSERT INTO tokens (id, name, secret_hash, scopes, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`,
    );
    this.selectByHash = db.prepare(`SELECT ${COLUMNS} FROM tokens WHERE secret_hash = ?`);
    this.selectAll = db.prepare(`SELECT ${COLUMNS} FROM tokens ORDER BY created_at, id`);
    this.revoke = db.prepare(
      `UPDATE tokens SET revoked_at = coalesce(revoked_at, ?) WHERE id = ? OR name = ? RETURNING ${COLUMNS}`,
    );
    this.touch = db.prepare('UPDATE tokens SET last_used_at = ? WHERE id = ?');
    this.count = db.prepare('SELECT count(*) FROM tokens').pluck();
  }

  async insertToken(token: NewTokenRecord): Promise<boolean> {
    const result = guarded(() =>
      this.insert.run(
        token.id,
        token.name,
        token.secretHash,
        token.scopes.join(','),
        token.createdAt.getTime(),
        token.expiresAt?.getTime() ?? null,
      ),
    );
    return result.changes === 1;
  }

  async findTokenBySecretHash(secretHash: string): Promise<TokenRecord | undefined> {
    const row = guarded(() => this.selectByHash.get(secretHash)) as TokenRow | undefined;
    return row === undefined ? undefined : toRecord(row);
  }

  async listTokens(): Promise<TokenRecord[]> {
    return (guarded(() => this.selectAll.all()) as TokenRow[]).map(toRecord);
  }

  async revokeToken(idOrName: string, at: Date): Promise<TokenRecord | undefined> {
    const row = guarded(() => this.revoke.get(at.getTime(), idOrName, idOrName)) as TokenRow | undefined;
    return row === undefined ? undefined : toRecord(row);
  }

  async recordTokenUse(id: string, at: Date): Promise<void> {
    guarded(() => this.touch.run(at.getTime(), id));
  }

  async countTokens(): Promise<number> {
    return guarded(() => this.count.get()) as number;
  }
}
