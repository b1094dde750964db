/**
 * Tokens: list, create (the secret shown once, with a copy button), revoke (confirmed first; revoking the token
 * signed in with signs the console out).
 */
import { useEffect, useState } from 'preact/hooks';
import { type Api, type Scope, type Token } from './api.js';
import { Confirm, Failure, html, Notice, Secret, when, withheld, Withheld, type Session } from './ui.js';

/** Every scope the API knows, each once: the compiler names the one left out when the API gains a scope. */
const SCOPE_CHOICES = Object.keys({
  'plants:read': true,
  'plants:write': true,
  admin: true,
  'metrics:read': true,
} satisfies Record<Scope, true>) as Scope[];

export function TokensScreen({
  api,
  session,
  onSelfRevoked,
}: {
  api: Api;
  session: Session;
  onSelfRevoked: () => void;
}) {
  const reason = withheld(session, 'admin');
  const [tokens, setTokens] = useState<Token[]>();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>(['plants:read']);
  const [expiresIn, setExpiresIn] = useState('');
  const [secret, setSecret] = useState<string>();
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<string>();
  const load = () => api.plants.listTokens().then(setTokens, setError);
  useEffect(() => {
    if (reason === undefined) void load();
  }, []);
  if (reason !== undefined)
    return html`<section>
      <h2>Tokens</h2>
      <${Withheld} reason=${reason} />
    </section>`;

  const act = async (what: () => Promise<unknown>) => {
    setError(undefined);
    setDone(undefined);
    try {
      await what();
      await load();
    } catch (failure) {
      setError(failure);
    }
  };
  const create = (event: Event) => {
    event.preventDefault();
    void act(async () => {
      const created = await api.plants.createToken({ name, scopes, ...(expiresIn === '' ? {} : { expiresIn }) });
      setSecret(created.secret);
    });
  };
  const revoke = (token: Token) => {
    if (token.id === session.tokenId) {
      // Every later request with it is refused: sign out now rather than show a screen of 401s.
      void api.plants.revokeToken(token.id).then(onSelfRevoked, setError);
      return;
    }
    void act(async () => {
      await api.plants.revokeToken(token.id);
      setDone(`Revoked ${token.name}: it is refused from its next request on.`);
    });
  };
  const toggle = (scope: Scope) => (e: Event) =>
    setScopes((e.target as HTMLInputElement).checked ? [...scopes, scope] : scopes.filter((s) => s !== scope));
  return html`<section aria-labelledby="tokens-title">
    <h2 id="tokens-title">Tokens</h2>
    <form class="panel" onSubmit=${create} aria-labelledby="new-token">
      <h3 id="new-token">New token</h3>
      <label for="token-name">Name</label>
      <input
        id="token-name"
        required
        value=${name}
        onInput=${(e: Event) => setName((e.target as HTMLInputElement).value)}
      />
      <fieldset>
        <legend>Scopes</legend>
        ${SCOPE_CHOICES.map(
          (scope) =>
            html`<label class="check"
              ><input type="checkbox" checked=${scopes.includes(scope)} onChange=${toggle(scope)} /> ${scope}</label
            >`,
        )}
      </fieldset>
      <label for="token-expires">Expires in (e.g. 12h, 30d; empty: never)</label>
      <input
        id="token-expires"
        value=${expiresIn}
        onInput=${(e: Event) => setExpiresIn((e.target as HTMLInputElement).value)}
      />
      <button type="submit">Create token</button>
      ${secret !== undefined && html`<${Secret} label="Token secret." secret=${secret} />`}
    </form>
    ${done !== undefined && html`<${Notice}>${done}</${Notice}>`}
    <${Failure} error=${error} />
    <div class="table-wrap">
      <table class="cards">
        <caption>
          Tokens
        </caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Scopes</th>
            <th scope="col">Status</th>
            <th scope="col">Created</th>
            <th scope="col">Expires</th>
            <th scope="col">Last used</th>
            <th scope="col"><span class="visually-hidden">Actions</span></th>
          </tr>
        </thead>
        <tbody>
          ${tokens?.map(
            (t) =>
              html`<tr key=${t.id} data-token=${t.name}>
                <td>
                  ${t.name}<br /><small><code class="id">${t.id}</code></small>
                </td>
                <td data-label="Scopes">${t.scopes.join(', ')}</td>
                <td data-label="Status" class=${`status-${t.status}`}>${t.status}</td>
                <td data-label="Created">${when(t.createdAt)}</td>
                <td data-label="Expires">${when(t.expiresAt)}</td>
                <td data-label="Last used">${when(t.lastUsedAt)}</td>
                <td class="row-actions">
                  ${
                    t.status !== 'revoked' &&
                    html`<${Confirm}
                      label="Revoke"
                      name=${`Revoke ${t.name}`}
                      question=${
                        t.id === session.tokenId
                          ? `Revoke ${t.name}, the token you are signed in with? The console signs out at once.`
                          : `Revoke ${t.name}? Every client using it is refused from its next request on; this cannot be undone.`
                      }
                      confirm=${`Yes, revoke ${t.name}`}
                      onConfirm=${() => revoke(t)}
                    />`
                  }
                </td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
  </section>`;
}
