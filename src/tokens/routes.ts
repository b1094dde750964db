/**
 * Tokens over HTTP (admin scope): the same rules as `plantstore token ...` (token-service.ts), so a
 * token made either way is the same. The secret is in the create response only.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { failure } from '../http/errors.js';
import type { TypedRoutes } from '../http/type-provider.js';
import type { TokenRecord } from '../store/types.js';
import { bearerAuth, beyondCreator, requireScope, tokenRefused } from './auth.js';
import { CreatedToken, NewToken, Token } from './schemas.js';
import {
  CreatorRevokedError,
  issueToken,
  parseDuration,
  TokenBeyondCreatorError,
  TokenError,
  TokenNameTakenError,
} from './token-service.js';
import { tokenStatus } from './token-status.js';

function tokenJson(token: TokenRecord) {
  const optional = (key: string, date: Date | null) => (date === null ? {} : { [key]: date.toISOString() });
  return {
    id: token.id,
    name: token.name,
    scopes: [...token.scopes],
    status: tokenStatus(token),
    createdAt: token.createdAt.toISOString(),
    ...optional('expiresAt', token.expiresAt),
    ...optional('lastUsedAt', token.lastUsedAt),
    ...optional('revokedAt', token.revokedAt),
    ...(token.createdBy === null ? {} : { createdBy: token.createdBy }),
  };
}

const example = {
  id: 'tok_5d2c8e1f0a9b3c47',
  name: 'inventory-sync',
  scopes: ['plants:read'],
  status: 'active',
  createdAt: '2026-01-01T12:00:00.000Z',
  expiresAt: '2026-01-31T12:00:00.000Z',
};

const TokenPath = {
  type: 'object',
  required: ['idOrName'],
  properties: {
    idOrName: { type: 'string', minLength: 1, maxLength: 64, description: 'The token id (tok_...) or its name.' },
  },
} as const;

const routes: TypedRoutes<[typeof NewToken, typeof Token, typeof CreatedToken]> = async (app) => {
  const { store, authenticator } = app;
  const admin = bearerAuth('admin');

  app.post(
    '/tokens',
    {
      schema: {
        operationId: 'createToken',
        summary: 'Create a token',
        description:
          'Issues a token with the scopes asked for (default plants:read and plants:write), like `plantstore token create`. ' +
          'The response carries its secret, **shown only here**: only a hash of it is stored.\n\n' +
          'A token creates only tokens within its own scopes and lifetime (403 otherwise): each scope asked for must be ' +
          "one it has, and when it expires, the new token's expiresIn must end no later. The new token records who " +
          'created it (`createdBy`) and is revoked with it.',
        tags: ['tokens'],
        security: admin,
        body: { $ref: 'NewToken', examples: [{ name: 'inventory-sync', scopes: ['plants:read'], expiresIn: '30d' }] },
        response: {
          201: {
            $ref: 'CreatedToken',
            description: 'The token, with its secret.',
            examples: [{ ...example, secret: 'pst_8J2m0q9YbN4tV1xR6cW3zL5kH7gF2dS0aP9uE4iO1yT' }],
          },
        },
      },
      config: { failures: ['TOKEN_BEYOND_CREATOR', 'TOKEN_NAME_TAKEN', 'STORE_UNAVAILABLE'] },
    },
    async (request, reply) => {
      const { name, scopes = ['plants:read', 'plants:write'], expiresIn } = request.body;
      try {
        const expiresInMs = expiresIn === undefined ? undefined : parseDuration(expiresIn);
        const { record, secret } = await issueToken(store.tokens, {
          name,
          scopes,
          ...(expiresInMs === undefined ? {} : { expiresInMs }),
          ...(request.token === undefined ? {} : { creator: request.token }),
        });
        return reply.code(201).send({ ...tokenJson(record), secret });
      } catch (error) {
        if (error instanceof TokenNameTakenError) throw failure('TOKEN_NAME_TAKEN', [name]);
        if (error instanceof TokenBeyondCreatorError) throw beyondCreator(error.message);
        if (error instanceof CreatorRevokedError) throw tokenRefused('revoked');
        if (error instanceof TokenError) throw failure('INVALID_FIELD', [error.message]);
        throw error;
      }
    },
  );

  app.get(
    '/tokens',
    {
      schema: {
        operationId: 'listTokens',
        summary: 'List tokens',
        description: 'Every token, active, expired or revoked, oldest first (never their secrets).',
        tags: ['tokens'],
        security: admin,
        response: {
          200: { type: 'array', items: { $ref: 'Token' }, description: 'The tokens.', examples: [[example]] },
        },
      },
      config: { failures: ['STORE_UNAVAILABLE'] },
    },
    async () => (await store.tokens.listTokens()).map(tokenJson),
  );

  app.get(
    '/tokens/current',
    {
      schema: {
        operationId: 'currentToken',
        summary: 'The token making this request',
        description:
          'The token this request is authenticated with, so a client can tell what it may do (its scopes) before trying. ' +
          'Any valid token may ask; it never shows another token.',
        tags: ['tokens'],
        security: [{ bearerAuth: [] }],
        response: { 200: { $ref: 'Token', description: 'The token.', examples: [example] } },
      },
      onRequest: requireScope(),
    },
    async (request) => {
      // onRequest admitted a token, or answered 401 without calling this.
      if (request.token === undefined) throw new Error('GET /tokens/current ran without an authenticated token');
      return tokenJson(request.token);
    },
  );

  app.delete(
    '/tokens/:idOrName',
    {
      schema: {
        operationId: 'revokeToken',
        summary: 'Revoke a token',
        description:
          'Revokes a token by id or name, like `plantstore token revoke`, with every token it created (directly or ' +
          'not): this instance refuses them from the next request, other instances within TOKEN_CACHE_TTL_MS (2 s by ' +
          'default). They stay listed, as revoked; revoking again changes nothing. A token may revoke itself.',
        tags: ['tokens'],
        security: admin,
        params: TokenPath,
        response: {
          200: {
            $ref: 'Token',
            description: 'The token, revoked.',
            examples: [{ ...example, status: 'revoked', revokedAt: '2026-01-02T08:00:00.000Z' }],
          },
        },
      },
      config: { failures: ['TOKEN_NOT_FOUND', 'STORE_UNAVAILABLE'] },
    },
    async (request) => {
      const { idOrName } = request.params;
      const revoked = await store.tokens.revokeToken(idOrName, new Date());
      if (revoked === undefined) throw failure('TOKEN_NOT_FOUND', [idOrName]);
      const ids = [revoked.token.id, ...revoked.descendantIds];
      authenticator.forget(ids);
      // Every other worker of the instance forgets them too before this answers (src/cluster).
      await request.server.cluster?.primary.ask('revoked', ids);
      return tokenJson(revoked.token);
    },
  );
};

export const tokensPlugin = fp(
  async (app: FastifyInstance) => {
    for (const schema of [NewToken, Token, CreatedToken]) app.addSchema(schema);
    await app.register(routes);
    // Another worker of the instance revoked it: refused here from the next request.
    app.cluster?.primary.answer('forget', (tokenIds) => {
      app.authenticator.forget(tokenIds);
      return null;
    });
  },
  { name: 'tokens', dependencies: ['store', 'auth', 'query-string-rules', 'collect-routes', 'cluster'] },
);
