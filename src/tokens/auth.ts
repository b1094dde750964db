/**
 * Bearer authentication (RFC 6750). A route's schema states its scope (`security:
 * bearerAuth(...)`), which the OpenAPI document shows; the check runs in onRequest, before the
 * body is read, so an unauthenticated client cannot make the service parse anything.
 */
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
  onRequestHookHandler,
  RouteOptions,
} from 'fastify';
import fp from 'fastify-plugin';
import { ApiError, failure } from '../http/errors.js';
import type { TokenRecord } from '../store/types.js';
import { TokenAuthenticator, type Authentication } from './authenticator.js';
import { isScope, type Scope } from '../domain/scopes.js';

export const REALM = 'plantstore';

declare module 'fastify' {
  interface FastifyInstance {
    authenticator: TokenAuthenticator;
  }
  interface FastifyRequest {
    /** The token that authenticated this request, once auth has run. */
    token?: TokenRecord;
  }
  interface FastifyContextConfig {
    /**
     * A route that also takes a single-use ticket (query `ticket`) in place of the Authorization header
     * (GET /events, for EventSource): the bearer secret the ticket stands for, or why it is refused.
     */
    redeemTicket?: (ticket: string, request: FastifyRequest) => { secret: string } | { refusal: string };
  }
}

/** The `security` of a route that needs a token with `scope`, or with any one of `scopes` (alternatives). */
export function bearerAuth<S extends Scope>(...scopes: [S, ...S[]]): { bearerAuth: [S] }[] {
  return scopes.map((scope) => ({ bearerAuth: [scope] }));
}

/** The scopes a route's `security` admits a bearer token with, any one of them; empty for a public route. */
export function requiredScopes(security: unknown): Scope[] {
  if (!Array.isArray(security)) return [];
  return (security as unknown[]).flatMap((requirement) => {
    const scopes =
      typeof requirement === 'object' && requirement !== null ? Reflect.get(requirement, 'bearerAuth') : undefined;
    const [scope] = Array.isArray(scopes) ? (scopes as unknown[]) : [];
    return typeof scope === 'string' && isScope(scope) ? [scope] : [];
  });
}

const BEARER = /^Bearer(?: +(\S*))? *$/i;

/** Why a token is refused, as the answer's Error record and WWW-Authenticate say it. */
export const TOKEN_REFUSALS = {
  malformed: 'the bearer token is malformed (Plant Store tokens look like pst_ followed by 43 characters)',
  unknown: 'the bearer token is not known',
  revoked: 'the bearer token has been revoked',
  expired: 'the bearer token has expired',
} as const;

/**
 * Node silently keeps the first of two Authorization headers, and a proxy in front may have
 * read the other: two are refused so the credentials are never ambiguous.
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

/** The 403 for a token asking to create one beyond its own scopes or lifetime (RFC 6750 insufficient_scope). */
export function beyondCreator(reason: string): ApiError {
  return failure('TOKEN_BEYOND_CREATOR', [reason], challenge(', error="insufficient_scope"'));
}

/** The 401 for a token refused for `reason`. */
export function tokenRefused(reason: keyof typeof TOKEN_REFUSALS): ApiError {
  const description = TOKEN_REFUSALS[reason];
  return failure(
    'TOKEN_INVALID',
    [description],
    challenge(`, error="invalid_token", error_description="${description}"`),
  );
}

/** Admits the request (undefined) or says why not. */
function admit(request: FastifyRequest, result: Authentication, scopes: readonly Scope[]): ApiError | undefined {
  if (!result.ok) return tokenRefused(result.reason);
  const [first] = scopes;
  if (first !== undefined && !scopes.some((scope) => result.token.scopes.includes(scope))) {
    return failure(
      'INSUFFICIENT_SCOPE',
      [scopes.join(' or '), result.token.scopes.join(', ')],
      challenge(`, error="insufficient_scope", scope="${first}"`),
    );
  }
  request.token = result.token;
  return undefined;
}

/** The secret of the request's `Authorization: Bearer` header; undefined without one. */
export function bearerSecret(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  const match = header === undefined ? null : BEARER.exec(header);
  return match === null ? undefined : (match[1] ?? '');
}

/** The redeemed `?ticket=` of a route that takes one; undefined when the route takes none or none was sent. */
function ticketOf(request: FastifyRequest): { secret: string } | { refusal: string } | undefined {
  const redeem = request.routeOptions.config.redeemTicket;
  if (redeem === undefined) return undefined;
  const query: unknown = request.query;
  const ticket = typeof query === 'object' && query !== null ? Reflect.get(query, 'ticket') : undefined;
  return typeof ticket === 'string' ? redeem(ticket, request) : undefined;
}

/** The onRequest hook that admits a valid token with one of `scopes`; with none, any valid token. */
export function requireScope(...scopes: Scope[]): onRequestHookHandler {
  // A callback hook, not an async one: a token in the cache (nearly every request)
  // is checked without a promise or a microtask; only a cache miss waits for the store.
  return function authenticate(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
    let secret = bearerSecret(request);
    const ticket = secret === undefined ? ticketOf(request) : undefined;
    if (ticket !== undefined) {
      if ('refusal' in ticket) {
        done(
          failure(
            'EVENTS_TICKET_INVALID',
            [ticket.refusal],
            challenge(`, error="invalid_token", error_description="${ticket.refusal}"`),
          ),
        );
        return;
      }
      secret = ticket.secret;
    }
    if (secret === undefined) {
      // No credentials at all, or another scheme (e.g. Basic): RFC 6750 3.1 says
      // the challenge then carries no error code.
      done(failure('TOKEN_MISSING', [], challenge('')));
      return;
    }
    if (!hasOneAuthorization(request)) {
      done(failure('BAD_REQUEST', ['malformed HTTP request: send exactly one Authorization header']));
      return;
    }
    const authenticator = request.server.authenticator;
    const cached = authenticator.authenticateFromCache(secret);
    if (cached !== undefined) {
      done(admit(request, cached, scopes));
      return;
    }
    authenticator.authenticate(secret).then((result) => done(admit(request, result, scopes)), done);
  };
}

function addToOnRequest(route: RouteOptions, hook: onRequestHookHandler): void {
  const existing = route.onRequest;
  route.onRequest = existing === undefined ? [hook] : [hook, ...(Array.isArray(existing) ? existing : [existing])];
}

/** Guards the routes added after it; the separate /metrics listener shares the app's `authenticator`. */
export const routeGuard = fp(
  async (app: FastifyInstance) => {
    app.addHook('onRoute', (route) => {
      const scopes = requiredScopes(route.schema?.security);
      if (scopes.length > 0) addToOnRequest(route, requireScope(...scopes));
    });
  },
  { name: 'route-guard', decorators: { fastify: ['authenticator'] } },
);

/** Tokens: the authenticator over the store's tokens, and the route guard. */
export const authPlugin = fp(
  async (app: FastifyInstance) => {
    app.decorate(
      'authenticator',
      new TokenAuthenticator(app.store.tokens, {
        cacheTtlMs: app.config.tokenCacheTtlMs,
        onBackgroundError: (error) => app.log.warn({ err: error }, 'could not record token use'),
      }),
    );
    await app.register(routeGuard);
  },
  { name: 'auth', dependencies: ['store'], decorators: { fastify: ['config'] } },
);
