/** Tokens: list, create (the secret shown once, with a copy button), revoke. */
import { useEffect, useState } from 'preact/hooks';
import { SCOPES, type Api, type Scope, type Token } from './api.js';
import { Failure, html, Secret, when, withheld, Withheld, type Session } from './ui.js';

export function TokensScreen({ api, session }: { api: Api; session: Session }) {
  const reason = withheld(session, 'admin');
  const [tokens, setTokens] = useState<Token[]>();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>(['plants:read']);
  const [expiresIn, setExpiresIn] = useState('');
  const [secret, setSecret] = useState<string>();
  const [error, setError] = useState<unknown>();
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
        ${SCOPES.map(
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
    <${Failure} error=${error} />
    <div class="table-wrap">
      <table>
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
                  ${t.name}<br /><small><code>${t.id}</code></small>
                </td>
                <td>${t.scopes.join(', ')}</td>
                <td class=${`status-${t.status}`}>${t.status}</td>
                <td>${when(t.createdAt)}</td>
                <td>${when(t.expiresAt)}</td>
                <td>${when(t.lastUsedAt)}</td>
                <td>
                  ${
                    t.status === 'revoked'
                      ? ''
                      : html`<button
                          type="button"
                          class="danger"
                          aria-label=${`Revoke ${t.name}`}
                          onClick=${() => act(() => api.plants.revokeToken(t.id))}
                        >
                          Revoke
                        </button>`
                  }
                </td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
  </section>`;
}
