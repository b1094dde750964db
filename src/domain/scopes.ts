/**
 * Token scopes. They are independent: `admin` manages tokens and webhooks and does not imply the plant scopes, so a
 * token can do exactly what it lists. A token creates only tokens within its own scopes (token-service.ts).
 */
export const SCOPES = ['plants:read', 'plants:write', 'admin', 'metrics:read'] as const;

export type Scope = (typeof SCOPES)[number];

/** What each scope grants, for the OpenAPI document, the docs and the CLI's help. */
export const SCOPE_GRANTS = {
  'plants:read': 'read plants and their changes',
  'plants:write': 'create, change and delete plants',
  admin: 'manage tokens and webhooks, and read /metrics (not the plant scopes)',
  'metrics:read': 'read /metrics and nothing else, e.g. for a metrics scraper',
} as const satisfies Record<Scope, string>;

/** "plants:read (read plants...); ...", every scope with what it grants. */
export const SCOPE_LIST = SCOPES.map((scope) => `${scope} (${SCOPE_GRANTS[scope]})`).join('; ');

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** Parses "plants:read,plants:write"; throws naming the first unknown scope. */
export function parseScopes(text: string): Scope[] {
  const scopes = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const scope of scopes) {
    if (!isScope(scope)) throw new Error(`unknown scope '${scope}' (known: ${SCOPES.join(', ')})`);
  }
  if (scopes.length === 0) throw new Error(`at least one scope is needed (known: ${SCOPES.join(', ')})`);
  return [...new Set(scopes)] as Scope[];
}
