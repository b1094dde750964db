/**
 * Token scopes. They are independent: `admin` manages tokens and webhooks and does
 * not imply the plant scopes, so a token can do exactly what it lists.
 */
export const SCOPES = ['plants:read', 'plants:write', 'admin'] as const;

export type Scope = (typeof SCOPES)[number];

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
