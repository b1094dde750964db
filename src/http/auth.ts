/**
 * Bearer authentication (RFC 6750), run in onRequest: before the body is read, so
 * an unauthenticated client cannot make the service parse anything.
 */
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { TokenRecord } from '../store/types.js';
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

function challenge(params: string): Record<string, string> {
  return { 'www-authenticate': `Bearer realm="${REALM}"${params}` };
}

export function requireScope(scope: Scope): onRequestHookHandler {
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const header = request.headers.authorization;
    const match = header === undefined ? null : BEARER.exec(header);
    if (match === null) {
      // No credentials at all, or another scheme (e.g. Basic): RFC 6750 3.1 says
      // the challenge then carries no error code.
      throw new ApiError(Errors.TOKEN_MISSING, 'authentication required: send Authorization: Bearer <token>', challenge(''));
    }
    const result = await request.server.authenticator.authenticate(match[1] ?? '');
    if (!result.ok) {
      const description = REASONS[result.reason];
      throw new ApiError(Errors.TOKEN_INVALID, description, challenge(`, error="invalid_token", error_description="${description}"`));
    }
    if (!result.token.scopes.includes(scope)) {
      throw new ApiError(
        Errors.INSUFFICIENT_SCOPE,
        `this operation needs a token with the ${scope} scope; this token has: ${result.token.scopes.join(', ')}`,
        challenge(`, error="insufficient_scope", scope="${scope}"`),
      );
    }
    request.token = result.token;
  };
}
