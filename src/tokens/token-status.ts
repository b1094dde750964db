import type { TokenRecord } from '../store/types.js';

export type TokenStatus = 'active' | 'expired' | 'revoked';

/** Whether a token is accepted now; a revoked token stays revoked whatever its expiry. */
export function tokenStatus(token: TokenRecord, now = Date.now()): TokenStatus {
  if (token.revokedAt !== null) return 'revoked';
  if (token.expiresAt !== null && token.expiresAt.getTime() <= now) return 'expired';
  return 'active';
}
