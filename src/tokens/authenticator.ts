/**
 * Resolves a bearer token with a short cache: a revocation takes effect everywhere within
 * `cacheTtlMs`, and a busy client costs one lookup per TTL. Expiry is checked on every request;
 * unknown tokens are not cached, so guessing cannot fill the cache.
 */
import type { TokenRecord, TokenStore } from '../store/types.js';
import { hashToken, isWellFormedToken } from './secret.js';

export type Authentication =
  | { readonly ok: true; readonly token: TokenRecord }
  | { readonly ok: false; readonly reason: 'malformed' | 'unknown' | 'revoked' | 'expired' };

interface CacheEntry {
  token: TokenRecord;
  fetchedAt: number;
}

export interface AuthenticatorOptions {
  readonly cacheTtlMs: number;
  readonly maxCachedTokens?: number;
  /** last_used_at is written at most this often per token, not on every request. */
  readonly lastUsedResolutionMs?: number;
  readonly onBackgroundError?: (error: unknown) => void;
}

export class TokenAuthenticator {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly maxCachedTokens: number;
  private readonly lastUsedResolutionMs: number;

  constructor(
    private readonly store: TokenStore,
    private readonly options: AuthenticatorOptions,
  ) {
    this.maxCachedTokens = options.maxCachedTokens ?? 10_000;
    this.lastUsedResolutionMs = options.lastUsedResolutionMs ?? 60_000;
  }

  async authenticate(secret: string, now = Date.now()): Promise<Authentication> {
    const fromCache = this.authenticateFromCache(secret, now);
    if (fromCache !== undefined) return fromCache;
    const secretHash = hashToken(secret);
    return this.verdict(secretHash, await this.fetch(secretHash, now), now);
  }

  /** Undefined when only `authenticate` can tell; lets the auth hook answer most requests without a promise. */
  authenticateFromCache(secret: string, now = Date.now()): Authentication | undefined {
    if (!isWellFormedToken(secret)) return { ok: false, reason: 'malformed' };
    const secretHash = hashToken(secret);
    const cached = this.cache.get(secretHash);
    if (cached === undefined || now - cached.fetchedAt >= this.options.cacheTtlMs) return undefined;
    return this.verdict(secretHash, cached.token, now);
  }

  /**
   * Drops tokens from the cache (they were just revoked here: a token and those it created), so this instance
   * refuses each from its next request.
   */
  forget(tokenIds: readonly string[]): void {
    const ids = new Set(tokenIds);
    for (const [secretHash, entry] of this.cache) if (ids.has(entry.token.id)) this.cache.delete(secretHash);
  }

  private verdict(secretHash: string, token: TokenRecord | undefined, now: number): Authentication {
    if (token === undefined) return { ok: false, reason: 'unknown' };
    if (token.revokedAt !== null) return { ok: false, reason: 'revoked' };
    if (token.expiresAt !== null && token.expiresAt.getTime() <= now) return { ok: false, reason: 'expired' };
    this.recordUse(secretHash, token, now);
    return { ok: true, token };
  }

  /** Reads the token from the store and refreshes its cache entry. */
  private async fetch(secretHash: string, now: number): Promise<TokenRecord | undefined> {
    const token = await this.store.findTokenBySecretHash(secretHash);
    this.cache.delete(secretHash);
    if (token !== undefined && this.options.cacheTtlMs > 0) {
      if (this.cache.size >= this.maxCachedTokens) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(secretHash, { token, fetchedAt: now });
    }
    return token;
  }

  private recordUse(secretHash: string, token: TokenRecord, now: number): void {
    const lastUsed = token.lastUsedAt?.getTime() ?? -Infinity;
    if (now - lastUsed < this.lastUsedResolutionMs) return;
    const entry = this.cache.get(secretHash);
    if (entry !== undefined) entry.token = { ...token, lastUsedAt: new Date(now) };
    this.store
      .recordTokenUse(token.id, new Date(now))
      .catch((error: unknown) => this.options.onBackgroundError?.(error));
  }
}
