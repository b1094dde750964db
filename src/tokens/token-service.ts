/**
 * Issuing and revoking tokens: shared by the CLI (`plantstore token ...`) and the
 * first-start bootstrap. The secret is returned once, here, and never stored.
 */
import type { TokenRecord, TokenStore } from '../store/types.js';
import { SCOPES, type Scope } from './scopes.js';
import { generateTokenId, generateTokenSecret, hashToken } from './secret.js';

const TOKEN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export const BOOTSTRAP_TOKEN_NAME = 'bootstrap';

export class TokenError extends Error {}
/** The name is taken by another token (an HTTP 409, not a bad request). */
export class TokenNameTakenError extends TokenError {}

export interface IssuedToken {
  readonly record: TokenRecord;
  /** The bearer secret: shown to the user once, never stored. */
  readonly secret: string;
}

export interface IssueTokenRequest {
  readonly name: string;
  readonly scopes: readonly Scope[];
  /** Lifetime in milliseconds; undefined for a token that does not expire. */
  readonly expiresInMs?: number;
}

export async function issueToken(
  store: TokenStore,
  request: IssueTokenRequest,
  now = new Date(),
): Promise<IssuedToken> {
  if (!TOKEN_NAME.test(request.name) || request.name.startsWith('tok_')) {
    throw new TokenError(
      `invalid token name '${request.name}': use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit (and not 'tok_', which token ids use)`,
    );
  }
  const secret = generateTokenSecret();
  const record: TokenRecord = {
    id: generateTokenId(),
    name: request.name,
    scopes: [...request.scopes],
    createdAt: now,
    expiresAt: request.expiresInMs === undefined ? null : new Date(now.getTime() + request.expiresInMs),
    lastUsedAt: null,
    revokedAt: null,
  };
  const inserted = await store.insertToken({ ...record, secretHash: hashToken(secret) });
  if (!inserted) throw new TokenNameTakenError(`a token named '${request.name}' already exists`);
  return { record, secret };
}

/**
 * On an empty store, one token with every scope, so a new user can make a request at once.
 * Instances starting together are safe: the unique name lets only one insert it.
 */
export async function issueBootstrapToken(store: TokenStore): Promise<IssuedToken | undefined> {
  if ((await store.countTokens()) > 0) return undefined;
  try {
    return await issueToken(store, { name: BOOTSTRAP_TOKEN_NAME, scopes: SCOPES });
  } catch (error) {
    if (error instanceof TokenError) return undefined;
    throw error;
  }
}

const DURATION = /^(\d+)\s*(s|m|h|d|w)$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/** Parses "90s", "15m", "12h", "30d", "2w" into milliseconds. */
export function parseDuration(text: string): number {
  const match = DURATION.exec(text.trim());
  if (match === null)
    throw new TokenError(`invalid duration '${text}': use a number and a unit, e.g. 90s, 15m, 12h, 30d, 2w`);
  const [, amount, unit] = match as unknown as [string, string, keyof typeof UNIT_MS];
  const ms = Number(amount) * UNIT_MS[unit];
  if (ms <= 0 || !Number.isSafeInteger(ms)) throw new TokenError(`invalid duration '${text}': must be positive`);
  return ms;
}
