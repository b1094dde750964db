/** The console's shell: sign-in with a pasted token, then one screen at a time. */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
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

async function signIn(token: string): Promise<{ api: Api; session: Session }> {
  const api = connect(token);
  const current = await answer(api.raw.GET('/tokens/current'));
  return { api, session: { name: current.name, scopes: current.scopes } };
}

function SignIn({ onSignedIn }: { onSignedIn: (api: Api, session: Session) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const { api, session } = await signIn(token.trim());
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

  useEffect(() => {
    const token = rememberedToken();
    if (token === undefined) return;
    signIn(token)
      .then(setSigned, () => forget())
      .finally(() => setRestoring(false));
  }, []);

  if (restoring) return html`<p class="loading">Signing in…</p>`;
  if (signed === undefined)
    return html`<${SignIn} onSignedIn=${(api: Api, session: Session) => setSigned({ api, session })} />`;

  const signOut = () => {
    forget();
    setSigned(undefined);
  };
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
      <button type="button" onClick=${signOut}>Sign out</button>
    </header>
    <main id="main" tabindex="-1">
      ${screen === 'plants' && html`<${PlantsScreen} api=${api} session=${session} />`}
      ${screen === 'webhooks' && html`<${WebhooksScreen} api=${api} session=${session} />`}
      ${screen === 'tokens' && html`<${TokensScreen} api=${api} session=${session} />`}
      ${screen === 'service' && html`<${ServiceScreen} api=${api} session=${session} />`}
    </main>`;
}

const root = document.getElementById('console');
if (root !== null) {
  root.textContent = '';
  render(html`<${Console} />`, root);
}
