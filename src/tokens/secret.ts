/**
 * Token secrets: 256 bits, a recognisable prefix (for secret scanners), stored only as a
 * SHA-256 hash. Looking up by hash keeps the check timing-safe: the secret is never compared.
 */
import { hash, randomBytes } from 'node:crypto';

export const TOKEN_PREFIX = 'pst_';
const TOKEN_PATTERN = /^pst_[A-Za-z0-9_-]{43}$/;

export function generateTokenSecret(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

export function isWellFormedToken(token: string): boolean {
  return TOKEN_PATTERN.test(token);
}

export function hashToken(token: string): string {
  // The one-shot form: no Hash object per call (this runs on every request).
  return hash('sha256', token, 'hex');
}

export function generateTokenId(): string {
  return 'tok_' + randomBytes(8).toString('hex');
}
