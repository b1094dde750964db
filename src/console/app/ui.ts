/**
 * Shared bits of the console's screens: the htm tag, how an API answer is shown, what a scope withholds, and the
 * confirmation every destructive action asks for.
 */
import type { ComponentChildren } from 'preact';
import { html } from 'htm/preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
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
  /** The signed-in token's id (tok_...): revoking it signs the console out. */
  readonly tokenId: string;
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

export interface ConfirmProps {
  /** The button's text, e.g. "Delete". */
  readonly label: string;
  /** Its accessible name when the text alone is ambiguous, e.g. "Revoke support-desk". */
  readonly name?: string;
  /** What will happen, asked before it does, e.g. "Delete plant 7? This cannot be undone." */
  readonly question: string;
  /** The confirming button's text, e.g. "Delete plant 7". */
  readonly confirm: string;
  readonly disabled?: boolean;
  readonly onConfirm: () => void;
}

/**
 * A destructive action in two steps, inline rather than window.confirm (which blocks the page and cannot be styled
 * or labelled): the first click asks; focus moves to Cancel, so Enter on a second press never destroys by accident;
 * Escape or Cancel puts the button back and focus on it.
 */
export function Confirm({ label, name, question, confirm, disabled = false, onConfirm }: ConfirmProps) {
  const [asking, setAsking] = useState(false);
  const [asked, setAsked] = useState(false);
  const cancel = useRef<HTMLButtonElement>(null);
  const trigger = useRef<HTMLButtonElement>(null);
  const questionId = useId();
  useEffect(() => {
    if (asking) cancel.current?.focus();
    else if (asked) trigger.current?.focus();
  }, [asking]);
  const ask = (yes: boolean) => {
    setAsked(true);
    setAsking(yes);
  };
  if (!asking)
    return html`<button
      type="button"
      class="danger"
      ref=${trigger}
      aria-label=${name}
      disabled=${disabled}
      onClick=${() => ask(true)}
    >
      ${label}
    </button>`;
  return html`<div
    class="confirm"
    role="group"
    aria-labelledby=${questionId}
    onKeyDown=${(e: KeyboardEvent) => e.key === 'Escape' && ask(false)}
  >
    <p id=${questionId}>${question}</p>
    <button
      type="button"
      class="danger"
      onClick=${() => {
        setAsking(false);
        onConfirm();
      }}
    >
      ${confirm}
    </button>
    <button type="button" ref=${cancel} onClick=${() => ask(false)}>Cancel</button>
  </div>`;
}
