/** The console's shell: sign-in with a pasted token, then one screen at a time. */
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { answer, connect, type Api } from './api.js';
import { PlantsScreen } from './plants.js';
import { ServiceScreen } from './service.js';
import { forget, remember, rememberedToken } from './session.js';
import { TokensScreen } from './tokens.js';
import { Failure, html, type Session } from './ui.js';
import { WebhooksScreen } from './webhooks.js';

const SCREENS = [
  ['plants', 'Plants'],
  ['webhooks', 'Webhooks'],
  ['tokens', 'Tokens'],
  ['service', 'Service'],
] as const;
type ScreenName = (typeof SCREENS)[number][0];

/**
 * Asks the service who `token` is; the console's clients then report any later 401 to `onRefused` (a wrong token
 * at sign-in is just shown, so the question itself goes through a client without that report).
 */
async function signIn(token: string, onRefused: (message: string) => void): Promise<{ api: Api; session: Session }> {
  const current = await answer(connect(token).raw.GET('/tokens/current'));
  return {
    api: connect(token, onRefused),
    session: { name: current.name, scopes: current.scopes, tokenId: current.id },
  };
}

/** Why the console signed itself out, shown on the sign-in screen. */
const signedOutBecause = (message: string) =>
  `Signed out: the service no longer accepts this token (HTTP 401: ${message}). Sign in with another token.`;

function SignIn({
  onSignedIn,
  onRefused,
  reason,
}: {
  onSignedIn: (api: Api, session: Session) => void;
  onRefused: (token: string) => (message: string) => void;
  reason: string | undefined;
}) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const { api, session } = await signIn(token.trim(), onRefused(token.trim()));
      remember(token.trim());
      onSignedIn(api, session);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return html`<main id="main" class="sign-in">
    <h1>Plant Store console</h1>
    ${reason !== undefined && html`<p class="failure" role="alert" data-signed-out>${reason}</p>`}
    <form onSubmit=${submit}>
      <label for="token">API token</label>
      <input
        id="token"
        type="password"
        autocomplete="off"
        spellcheck="false"
        placeholder="pst_…"
        required
        value=${token}
        onInput=${(e: Event) => setToken((e.target as HTMLInputElement).value)}
      />
      <p class="hint">Kept in this tab only, until you sign out or close it.</p>
      <button type="submit" disabled=${busy}>Sign in</button>
    </form>
    <${Failure} error=${error} />
  </main>`;
}

function Console() {
  const [signed, setSigned] = useState<{ api: Api; session: Session }>();
  const [restoring, setRestoring] = useState(rememberedToken() !== undefined);
  const [screen, setScreen] = useState<ScreenName>('plants');
  const [reason, setReason] = useState<string>();
  const current = useRef<string | undefined>(undefined);

  const signOut = (why?: string) => {
    current.current = undefined;
    forget();
    setSigned(undefined);
    setReason(why);
  };
  const enter = (api: Api, session: Session) => {
    current.current = api.token;
    setReason(undefined);
    setSigned({ api, session });
  };
  // A 401 from any screen: the token was revoked or expired since sign-in, so every screen would fail alike. Only
  // for the token signed in now: a late answer to an earlier token's request must not sign the next one out.
  const onRefused = (token: string) => (message: string) => {
    if (current.current === token) signOut(signedOutBecause(message));
  };

  useEffect(() => {
    const token = rememberedToken();
    if (token === undefined) return;
    signIn(token, onRefused(token))
      .then(({ api, session }) => enter(api, session), forget)
      .finally(() => setRestoring(false));
  }, []);

  if (restoring) return html`<p class="loading">Signing in…</p>`;
  if (signed === undefined) return html`<${SignIn} onSignedIn=${enter} onRefused=${onRefused} reason=${reason} />`;

  const { api, session } = signed;
  return html`<header class="bar">
      <a class="skip" href="#main">Skip to content</a>
      <span class="brand">Plant Store</span>
      <nav aria-label="Screens">
        ${SCREENS.map(
          ([name, label]) =>
            html`<button
              type="button"
              aria-current=${screen === name ? 'page' : undefined}
              onClick=${() => setScreen(name)}
            >
              ${label}
            </button>`,
        )}
      </nav>
      <span class="who">Signed in as <strong>${session.name}</strong> (${session.scopes.join(', ')})</span>
      <button type="button" onClick=${() => signOut()}>Sign out</button>
    </header>
    <main id="main" tabindex="-1">
      ${screen === 'plants' && html`<${PlantsScreen} api=${api} session=${session} />`}
      ${screen === 'webhooks' && html`<${WebhooksScreen} api=${api} session=${session} />`}
      ${
        screen === 'tokens' &&
        html`<${TokensScreen}
          api=${api}
          session=${session}
          onSelfRevoked=${() =>
            signOut(
              `Signed out: you revoked the token you were signed in with (${session.name}). Sign in with another token.`,
            )}
        />`
      }
      ${screen === 'service' && html`<${ServiceScreen} api=${api} session=${session} />`}
    </main>`;
}

const root = document.getElementById('console');
if (root !== null) {
  root.textContent = '';
  render(html`<${Console} />`, root);
}
