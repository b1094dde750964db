/**
 * The token shapes, as JSON Schema: validation, serialisation and the OpenAPI document
 * all come from these objects. A token's secret appears only in CreatedToken.
 */
import { LIFETIME, LIFETIME_RULE } from '../domain/lifetime.js';
import { TOKEN_NAME, TOKEN_NAME_RULE } from '../domain/text-rules.js';
import { SCOPE_LIST, SCOPES } from '../domain/scopes.js';

/** A token name's length; its characters are TOKEN_NAME's. */
export const TOKEN_NAME_MAX_LENGTH = 64;

const DateTime = { type: 'string', format: 'date-time' } as const;

const Scopes = {
  type: 'array',
  items: { type: 'string', enum: SCOPES },
  minItems: 1,
  uniqueItems: true,
  description:
    `What the token may do: any of ${SCOPE_LIST}. They are independent: a token can do exactly what its scopes ` +
    'grant, and a token it creates gets only scopes it has itself.',
  example: ['plants:read'],
} as const;

export const NewToken = {
  $id: 'NewToken',
  type: 'object',
  required: ['name'],
  properties: {
    name: {
      type: 'string',
      minLength: 1,
      maxLength: TOKEN_NAME_MAX_LENGTH,
      pattern: TOKEN_NAME,
      description: `A unique name, e.g. the client it is for: 1-${TOKEN_NAME_MAX_LENGTH} ${TOKEN_NAME_RULE}.`,
      example: 'inventory-sync',
    },
    scopes: {
      ...Scopes,
      description:
        `${Scopes.description} Default: plants:read and plants:write. Asking for a scope the creating token ` +
        'lacks is refused (403).',
    },
    expiresIn: {
      type: 'string',
      pattern: LIFETIME,
      description:
        `Lifetime: ${LIFETIME_RULE}. Left out, the token never expires. It may not end after the creating ` +
        "token's own expiry: a token that expires must give one that ends no later (403 otherwise).",
      example: '30d',
    },
  },
  description: 'A token to create. Properties not listed here are ignored.',
} as const;

const tokenProperties = {
  id: { type: 'string', description: 'The token id (tok_...).', example: 'tok_5d2c8e1f0a9b3c47' },
  name: { type: 'string', description: 'Its unique name.', example: 'inventory-sync' },
  scopes: Scopes,
  status: {
    type: 'string',
    enum: ['active', 'expired', 'revoked'],
    description: 'Whether it is accepted now: revoked wins over expired.',
  },
  createdAt: DateTime,
  expiresAt: { ...DateTime, description: 'When it stops being accepted; omitted when it never expires.' },
  lastUsedAt: {
    ...DateTime,
    description: 'When a request last used it (recorded at most once a minute); omitted when never used.',
  },
  revokedAt: {
    ...DateTime,
    description: 'When it was revoked, itself or with the token that created it; omitted when it was not.',
  },
  createdBy: {
    type: 'string',
    description:
      'The id of the token that created it with POST /tokens; omitted for the first-start token and tokens made ' +
      'with `plantstore token create`.',
    example: 'tok_0a1b2c3d4e5f6789',
  },
} as const;

export const Token = {
  $id: 'Token',
  type: 'object',
  required: ['id', 'name', 'scopes', 'status', 'createdAt'],
  properties: tokenProperties,
  description: 'An API token, never its secret (only its SHA-256 hash is stored).',
} as const;

export const CreatedToken = {
  $id: 'CreatedToken',
  type: 'object',
  required: ['id', 'name', 'scopes', 'status', 'createdAt', 'secret'],
  properties: {
    ...tokenProperties,
    secret: {
      type: 'string',
      description: 'The bearer secret (pst_ and 43 characters), **shown only in this response**: store it safely.',
      example: 'pst_8J2m0q9YbN4tV1xR6cW3zL5kH7gF2dS0aP9uE4iO1yT',
    },
  },
  description: 'A token just created, with its secret.',
} as const;
