import type Database from 'better-sqlite3';
import type { InsertTokenOutcome, NewTokenRecord, TokenRecord, TokenRevocation, TokenStore } from '../types.js';
import type { Scope } from '../../domain/scopes.js';
import { guarded } from './errors.js';

interface TokenRow {
  id: string;
  name: string;
  scopes: string;
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
  revoked_at: number | null;
  created_by: string | null;
}

const COLUMNS = 'id, name, scopes, created_at, expires_at, last_used_at, revoked_at, created_by';
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
    createdBy: row.created_by,
  };
}

/** The token named by id or name, and every token it created, directly or not (tokens_created_by finds them). */
const LINEAGE = `WITH RECURSIVE lineage (id) AS (
  SELECT id FROM tokens WHERE id = ? OR name = ?
  UNION SELECT tokens.id FROM tokens JOIN lineage ON tokens.created_by = lineage.id
)`;

export class SqliteTokenStore implements TokenStore {
  private readonly insert: Database.Statement;
  private readonly creatorActive: Database.Statement;
  private readonly insertChecked: (token: NewTokenRecord) => InsertTokenOutcome;
  private readonly selectByHash: Database.Statement;
  private readonly selectAll: Database.Statement;
  private readonly revoke: Database.Statement;
  private readonly touch: Database.Statement;
  private readonly count: Database.Statement;

  constructor(db: Database.Database) {
    this.insert = db.prepare(
      `INSERT INTO tokens (id, name, secret_hash, scopes, created_at, expires_at, created_by)
       VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`,
    );
    this.creatorActive = db.prepare('SELECT 1 FROM tokens WHERE id = ? AND revoked_at IS NULL').pluck();
    // IMMEDIATE: the write lock is taken before the creator is looked at, so a revocation by another process (the
    // CLI) comes wholly before or after, never between the look and the insert.
    const checked = db.transaction((token: NewTokenRecord): InsertTokenOutcome => {
      if (token.createdBy !== null && this.creatorActive.get(token.createdBy) === undefined) return 'creator-revoked';
      const result = this.insert.run(
        token.id,
        token.name,
        token.secretHash,
        token.scopes.join(','),
        token.createdAt.getTime(),
        token.expiresAt?.getTime() ?? null,
        token.createdBy,
      );
      return result.changes === 1 ? 'inserted' : 'name-taken';
    });
    this.insertChecked = (token) => checked.immediate(token);
    this.selectByHash = db.prepare(`SELECT ${COLUMNS} FROM tokens WHERE secret_hash = ?`);
    this.selectAll = db.prepare(`SELECT ${COLUMNS} FROM tokens ORDER BY created_at, id`);
    this.revoke = db.prepare(
      `${LINEAGE} UPDATE tokens SET revoked_at = coalesce(revoked_at, ?) WHERE id IN lineage RETURNING ${COLUMNS}`,
    );
    this.touch = db.prepare('UPDATE tokens SET last_used_at = ? WHERE id = ?');
    this.count = db.prepare('SELECT count(*) FROM tokens').pluck();
  }

  async insertToken(token: NewTokenRecord): Promise<InsertTokenOutcome> {
    return guarded(() => this.insertChecked(token));
  }

  async findTokenBySecretHash(secretHash: string): Promise<TokenRecord | undefined> {
    const row = guarded(() => this.selectByHash.get(secretHash)) as TokenRow | undefined;
    return row === undefined ? undefined : toRecord(row);
  }

  async listTokens(): Promise<TokenRecord[]> {
    return (guarded(() => this.selectAll.all()) as TokenRow[]).map(toRecord);
  }

  async revokeToken(idOrName: string, at: Date): Promise<TokenRevocation | undefined> {
    const rows = guarded(() => this.revoke.all(idOrName, idOrName, at.getTime())) as TokenRow[];
    const named = rows.find((row) => row.id === idOrName || row.name === idOrName);
    if (named === undefined) return undefined;
    return { token: toRecord(named), descendantIds: rows.filter((row) => row !== named).map((row) => row.id) };
  }

  async recordTokenUse(id: string, at: Date): Promise<void> {
    guarded(() => this.touch.run(at.getTime(), id));
  }

  async countTokens(): Promise<number> {
    return guarded(() => this.count.get()) as number;
  }
}
