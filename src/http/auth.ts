/**
 * Bearer authentication (RFC 6750), run in onRequest: before the body is read, so
 * an unauthenticated client cannot make the service parse anything.
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRequestHookHandler } from 'fastify';
import type { TokenRecord } from '../store/types.js';
import type { Authentication } from '../tokens/authenticator.js';
import type { Scope } from '../tokens/scopes.js';
import { ApiError, Errors } from './errors.js';

export const REALM = 'plantstore';

declare module 'fastify' {
  interface FastifyRequest {
    /** The token that authenticated this request, once auth has run. */
    token?: TokenRecord;
  }
}

const BEARER = /^Bearer(?: +(\S*))? *$/i;

const REASONS = {
  malformed: 'the bearer token is malformed (Plant Store tokens look like pst_ followed by 43 characters)',
  unknown: 'the bearer token is not known',
  revoked: 'the bearer token has been revoked',
  expired: 'the bearer token has expired',
} as const;

/**
 * Node keeps the first of two Authorization headers and drops the other without a
 * word; a proxy in front may have read the other one. Which credentials a request
 * carries must not be ambiguous, so two are refused (RFC 9110 5.3: a field that is
 * not a list must not be sent twice).
 */
function hasOneAuthorization(request: FastifyRequest): boolean {
  const raw = request.raw.rawHeaders;
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length === 13 && name.toLowerCase() === 'authorization') seen++;
  }
  return seen <= 1;
}

function challenge(params: string): Record<string, string> {
  return { 'www-authenticate': `Bearer realm="${REALM}"${params}` };
}

/** Admits the request (undefined) or says why not. */
function admit(request: FastifyRequest, result: Authentication, scope: Scope): ApiError | undefined {
  if (!result.ok) {
    const description = REASONS[result.reason];
    return new ApiError(Errors.TOKEN_INVALID, description, challenge(`, error="invalid_token", error_description="${description}"`));
  }
  if (!result.token.scopes.includes(scope)) {
    return new ApiError(
      Errors.INSUFFICIENT_SCOPE,
      `this operation needs a token with the ${scope} scope; this token has: ${result.token.scopes.join(', ')}`,
      challenge(`, error="insufficient_scope", scope="${scope}"`),
    );
  }
  request.token = result.token;
  return undefined;
}

export function requireScope(scope: Scope): onRequestHookHandler {
  // A callback hook, not an async one: a token in the cache (nearly every request)
  // is checked without a promise or a microtask; only a cache miss waits for the store.
  return function authenticate(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
    const header = request.headers.authorization;
    const match = header === undefined ? null : BEARER.exec(header);
    if (match === null) {
      // No credentials at all, or another scheme (e.g. Basic): RFC 6750 3.1 says
      // the challenge then carries no error code.
      done(new ApiError(Errors.TOKEN_MISSING, 'authentication required: send Authorization: Bearer <token>', challenge('')));
      return;
    }
    if (!hasOneAuthorization(request)) {
      done(new ApiError(Errors.BAD_REQUEST, 'malformed HTTP request: send exactly one Authorization header'));
      return;
    }
    const secret = match[1] ?? '';
    const authenticator = request.server.authenticator;
    const cached = authenticator.authenticateFromCache(secret);
    if (cached !== undefined) {
      done(admit(request, cached, scope));
      return;
    }
    authenticator.authenticate(secret).then((result) => done(admit(request, result, scope)), done);
  };
}
