/** Shared bits of the console's screens: the htm tag, how an API answer is shown, and what a scope withholds. */
import type { ComponentChildren } from 'preact';
import { html } from 'htm/preact';
import { PlantStoreConnectionError, PlantStoreError, type Scope } from './api.js';

export { html };

/** What to show for a failed call: the service's own status, code and message, word for word. */
export function describeFailure(error: unknown): string {
  if (error instanceof PlantStoreError) {
    const forbidden = error.status === 403 ? 'Forbidden: ' : '';
    return `${forbidden}HTTP ${error.status}${error.error === 0 ? '' : ` (error ${error.error})`}: ${error.message}`;
  }
  if (error instanceof PlantStoreConnectionError) return error.message;
  return error instanceof Error ? error.message : String(error);
}

export function Failure({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null;
  return html`<p class="failure" role="alert">${describeFailure(error)}</p>`;
}

export function Notice({ children }: { children: ComponentChildren }) {
  return html`<p class="notice" role="status">${children}</p>`;
}

export interface Session {
  readonly scopes: readonly Scope[];
  readonly name: string;
}

/** Why a control is unavailable to this token, or undefined when it may be used. */
export function withheld(session: Session, scope: Scope): string | undefined {
  return session.scopes.includes(scope)
    ? undefined
    : `Needs a token with the ${scope} scope; this token (${session.name}) has ${session.scopes.join(', ')}.`;
}

export function Withheld({ reason }: { reason: string | undefined }) {
  return reason === undefined ? null : html`<p class="withheld">${reason}</p>`;
}

export const when = (date: string | undefined) => (date === undefined ? '—' : new Date(date).toLocaleString());

/** A secret shown once, with a copy button. */
export function Secret({ label, secret }: { label: string; secret: string }) {
  const copy = () => void navigator.clipboard?.writeText(secret);
  return html`<div class="secret" role="status">
    <p><strong>${label}</strong> It is shown only now: store it safely.</p>
    <code data-secret>${secret}</code>
    <button type="button" onClick=${copy}>Copy</button>
  </div>`;
}
