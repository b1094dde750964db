/**
 * Issuing and revoking tokens: shared by the CLI (`plantstore token ...`) and the
 * first-start bootstrap. The secret is returned once, here, and never stored.
 */
import type { TokenRecord, TokenStore } from '../store/types.js';
import { LIFETIME_RULE, lifetimeMs, MAX_LIFETIME_MS } from '../domain/lifetime.js';
import { TOKEN_NAME, TOKEN_NAME_RULE } from '../domain/text-rules.js';
import { TOKEN_NAME_MAX_LENGTH } from './schemas.js';
import { SCOPES, type Scope } from '../domain/scopes.js';
import { generateTokenId, generateTokenSecret, hashToken } from './secret.js';

/** The name rule NewToken's schema states, for callers without the schema (the CLI). */
const NAME_PATTERN = new RegExp(TOKEN_NAME);
export const BOOTSTRAP_TOKEN_NAME = 'bootstrap';

export class TokenError extends Error {}
/** The name is taken by another token (an HTTP 409, not a bad request). */
export class TokenNameTakenError extends TokenError {}
/** The token asked for could do more, or live longer, than the token creating it (an HTTP 403). */
export class TokenBeyondCreatorError extends TokenError {}
/** The creating token was revoked while it was creating this one; nothing was stored (an HTTP 401). */
export class CreatorRevokedError extends TokenError {}

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
  /**
   * The token creating this one (POST /tokens): the new token gets only scopes it has and ends no later than it, and
   * is revoked with it. Undefined for the first-start token and the CLI's, which work on the store directly.
   */
  readonly creator?: TokenRecord;
}

/** Why `creator` may not create a token with `scopes` ending at `expiresAt`; undefined when it may. */
function beyondCreator(creator: TokenRecord, scopes: readonly Scope[], expiresAt: Date | null): string | undefined {
  const lacking = scopes.filter((scope) => !creator.scopes.includes(scope));
  if (lacking.length > 0) {
    return `this token has the scopes ${creator.scopes.join(', ')} and cannot give ${lacking.join(', ')}`;
  }
  if (creator.expiresAt === null) return undefined;
  const end = creator.expiresAt.toISOString();
  if (expiresAt === null) {
    return `this token expires at ${end}, so the token it creates needs an expiresIn that ends by then`;
  }
  if (expiresAt > creator.expiresAt) return `expiresIn would end after this token does, at ${end}`;
  return undefined;
}

export async function issueToken(
  store: TokenStore,
  request: IssueTokenRequest,
  now = new Date(),
): Promise<IssuedToken> {
  if (request.name.length > TOKEN_NAME_MAX_LENGTH || !NAME_PATTERN.test(request.name)) {
    throw new TokenError(`invalid token name '${request.name}': use 1-${TOKEN_NAME_MAX_LENGTH} ${TOKEN_NAME_RULE}`);
  }
  const lifetime = request.expiresInMs;
  // Checked here too, whoever the caller: a lifetime past the bound once became an expiry that is no date at all.
  if (lifetime !== undefined && !(Number.isSafeInteger(lifetime) && lifetime > 0 && lifetime <= MAX_LIFETIME_MS)) {
    throw new TokenError(`invalid lifetime of ${lifetime} ms: expiresIn must be ${LIFETIME_RULE}`);
  }
  const expiresAt = lifetime === undefined ? null : new Date(now.getTime() + lifetime);
  const { creator } = request;
  const beyond = creator === undefined ? undefined : beyondCreator(creator, request.scopes, expiresAt);
  if (beyond !== undefined) throw new TokenBeyondCreatorError(beyond);
  const secret = generateTokenSecret();
  const record: TokenRecord = {
    id: generateTokenId(),
    name: request.name,
    scopes: [...request.scopes],
    createdAt: now,
    expiresAt,
    lastUsedAt: null,
    revokedAt: null,
    createdBy: creator?.id ?? null,
  };
  const outcome = await store.insertToken({ ...record, secretHash: hashToken(secret) });
  switch (outcome) {
    case 'inserted':
      return { record, secret };
    case 'name-taken':
      throw new TokenNameTakenError(`a token named '${request.name}' already exists`);
    case 'creator-revoked':
      throw new CreatorRevokedError('the bearer token has been revoked');
  }
}

/**
 * On an empty store, one token with every scope, so a new user can make a request at once.
 * Instances starting together are safe: the unique name lets only one insert it.
 */
/** Whether the store has no tokens yet, so that its first start is to make one. */
export async function hasNoTokens(store: TokenStore): Promise<boolean> {
  return (await store.countTokens()) === 0;
}

export async function issueBootstrapToken(store: TokenStore): Promise<IssuedToken | undefined> {
  if ((await store.countTokens()) > 0) return undefined;
  try {
    return await issueToken(store, { name: BOOTSTRAP_TOKEN_NAME, scopes: SCOPES });
  } catch (error) {
    if (error instanceof TokenError) return undefined;
    throw error;
  }
}

/**
 * The first start's token, made once the service listens. The store may fail in that moment like at any other
 * (requests get 503); the service keeps serving, and since the store still has no token, its next start makes one.
 */
export async function firstStartToken(
  store: TokenStore,
  log: { warn(details: object, message: string): void },
): Promise<IssuedToken | undefined> {
  try {
    return await issueBootstrapToken(store);
  } catch (error) {
    log.warn({ err: error }, 'the first-start token could not be made now; the next start will make it');
    return undefined;
  }
}

/** Parses a lifetime ("90s", "15m", "12h", "30d", "2w") into milliseconds; `field` names it in the refusal. */
export function parseDuration(text: string, field = 'expiresIn'): number {
  const ms = lifetimeMs(text.trim());
  if (ms === undefined) throw new TokenError(`invalid duration '${text}': ${field} must be ${LIFETIME_RULE}`);
  return ms;
}
