/**
 * The signed-in token: kept in sessionStorage (this tab only; gone when the tab closes), never in a URL or
 * localStorage. Signing out forgets it.
 */
const KEY = 'plantstore.console.token';

export function rememberedToken(): string | undefined {
  return sessionStorage.getItem(KEY) ?? undefined;
}

export function remember(token: string): void {
  sessionStorage.setItem(KEY, token);
}

export function forget(): void {
  sessionStorage.removeItem(KEY);
}
