/** The plants screen: search, filter, sort, cursor paging with a count, create, edit, import, export, live changes. */
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { Api, Plant, PlantChangeEvent, PlantOrder, PlantPage } from './api.js';
import { ExportButton, ImportPanel } from './bulk.js';
import { LivePanel } from './live.js';
import { PlantEditor } from './plant-editor.js';
import { createdOf, EMPTY_DRAFT, PLANT_FIELD_VIEWS, type Draft } from './plant-fields.js';
import { Failure, html, Notice, withheld, Withheld, type Session } from './ui.js';

const PAGE_SIZE = 50;

interface Query {
  readonly q: string;
  readonly tag: string;
  readonly sort: PlantOrder;
  readonly count: 'none' | 'exact' | 'estimated';
}

function CreatePlant({ api, onCreated }: { api: Api; onCreated: () => void }) {
  const [id, setId] = useState('');
  const [draft, setDraft] = useState<Draft>(EMPTY_DRAFT);
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<string>();
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setDone(undefined);
    try {
      // The id goes as the operator typed it (a string the client sends as an exact int64).
      await api.plants.createPlant({ id: id.trim(), ...createdOf(draft) });
      setDone(`Created plant ${id.trim()}.`);
      onCreated();
    } catch (failure) {
      setError(failure);
    }
  };
  const input = (set: (value: string) => void) => (e: Event) => set((e.target as HTMLInputElement).value);
  return html`<form class="panel" onSubmit=${submit} aria-labelledby="create-title">
    <h3 id="create-title">New plant</h3>
    <label for="new-id">Id (int64)</label>
    <input id="new-id" inputmode="numeric" required value=${id} onInput=${input(setId)} />
    ${PLANT_FIELD_VIEWS.map(
      ({ key, label, optional }) =>
        html`<label for=${`new-${key}`}>${optional ? `${label} (optional)` : label}</label>
          <input
            id=${`new-${key}`}
            required=${!optional}
            value=${draft[key]}
            onInput=${input((value) => setDraft({ ...draft, [key]: value }))}
          />`,
    )}
    <button type="submit">Create</button>
    ${done !== undefined && html`<${Notice}>${done}</${Notice}>`}
    <${Failure} error=${error} />
  </form>`;
}

export function PlantsScreen({ api, session }: { api: Api; session: Session }) {
  const [query, setQuery] = useState<Query>({ q: '', tag: '', sort: 'id', count: 'exact' });
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [page, setPage] = useState<PlantPage>();
  const [error, setError] = useState<unknown>();
  const [editing, setEditing] = useState<bigint>();
  const [reloads, setReloads] = useState(0);
  const [done, setDone] = useState<string>();
  const readReason = withheld(session, 'plants:read');
  const writeReason = withheld(session, 'plants:write');
  const cursor = cursors[cursors.length - 1];

  useEffect(() => {
    if (readReason !== undefined) return;
    const { q, tag, sort, count } = query;
    // Typing sends a request per keystroke: an answer to an earlier one arriving late must not replace the page.
    let current = true;
    api.plants
      .listPlants({
        limit: PAGE_SIZE,
        sort,
        ...(q === '' ? {} : { q }),
        ...(tag === '' ? {} : { tag }),
        ...(cursor === undefined ? {} : { cursor }),
        ...(count === 'none' ? {} : { count }),
      })
      .then(
        (next) => {
          if (!current) return;
          setPage(next);
          setError(undefined);
        },
        (failure: unknown) => current && setError(failure),
      );
    return () => {
      current = false;
    };
  }, [query, cursor, reloads]);

  const change = (key: keyof Query) => (event: Event) => {
    setQuery({ ...query, [key]: (event.target as HTMLInputElement).value });
    setCursors([undefined]);
  };
  const reload = () => setReloads((n) => n + 1);
  const replaceRow = (plant: Plant) =>
    setPage((p) => p && { ...p, plants: p.plants.map((row) => (row.id === plant.id ? plant : row)) });
  const removeRow = (id: bigint) => setPage((p) => p && { ...p, plants: p.plants.filter((row) => row.id !== id) });
  const onLive = useCallback((event: PlantChangeEvent) => {
    if (event.type === 'plant.updated') replaceRow(event.plant);
    else if (event.type === 'plant.deleted') removeRow(event.plant.id);
  }, []);

  if (readReason !== undefined)
    return html`<section>
      <h2>Plants</h2>
      <${Withheld} reason=${readReason} />
    </section>`;

  const total = page?.total;
  const first = (cursors.length - 1) * PAGE_SIZE;
  return html`<section aria-labelledby="plants-title">
    <h2 id="plants-title">Plants</h2>
    <div class="layout">
      <div class="primary">
        <form class="filters" role="search" onSubmit=${(e: Event) => e.preventDefault()}>
          <div>
            <label for="q">Search (word prefixes)</label>
            <input id="q" type="search" value=${query.q} onInput=${change('q')} />
          </div>
          <div>
            <label for="tag">Tag</label>
            <input id="tag" value=${query.tag} onInput=${change('tag')} />
          </div>
          <div>
            <label for="sort">Sort</label>
            <select id="sort" value=${query.sort} onChange=${change('sort')}>
              <option value="id">Id, ascending</option>
              <option value="-id">Id, descending</option>
              <option value="name">Name, A to Z</option>
              <option value="-name">Name, Z to A</option>
            </select>
          </div>
          <div>
            <label for="count">Count</label>
            <select id="count" value=${query.count} onChange=${change('count')}>
              <option value="exact">Exact</option>
              <option value="estimated">Estimated</option>
              <option value="none">Don't count</option>
            </select>
          </div>
        </form>
        ${
          editing !== undefined &&
          html`<${PlantEditor}
            key=${String(editing)}
            api=${api}
            id=${editing}
            onSaved=${replaceRow}
            onDeleted=${(id: bigint, byOthers: boolean) => {
              removeRow(id);
              setEditing(undefined);
              setDone(byOthers ? `Plant ${String(id)} was deleted by someone else.` : `Deleted plant ${String(id)}.`);
              // The count (and the page) as they are now: "of 15" would outlive the plant.
              reload();
            }}
            onClose=${() => setEditing(undefined)}
          />`
        }
        ${done !== undefined && html`<${Notice}>${done}</${Notice}>`}
        <p class="summary" role="status">
          ${
            page === undefined
              ? 'Loading…'
              : page.plants.length === 0
                ? 'No plants match.'
                : `Showing ${first + 1}–${first + page.plants.length}`
          }
          ${total !== undefined && ` of ${total.exact ? '' : 'about '}${total.count}`}
        </p>
        <div class="table-wrap">
          <table class="plants cards">
            <caption class="visually-hidden">
              Plants
            </caption>
            <thead>
              <tr>
                <th scope="col">Id</th>
                ${PLANT_FIELD_VIEWS.map(({ key, label }) => html`<th scope="col" key=${key}>${label}</th>`)}
                ${writeReason === undefined && html`<th scope="col"><span class="visually-hidden">Actions</span></th>`}
              </tr>
            </thead>
            <tbody>
              ${page?.plants.map(
                (plant) =>
                  html`<tr key=${String(plant.id)} data-id=${String(plant.id)}>
                    <td><code class="id">${String(plant.id)}</code></td>
                    ${PLANT_FIELD_VIEWS.map(
                      ({ key, label }) => html`<td data-label=${label} key=${key}>${plant[key] ?? ''}</td>`,
                    )}
                    ${
                      writeReason === undefined &&
                      html`<td class="row-actions">
                        <button
                          type="button"
                          onClick=${() => {
                            setDone(undefined);
                            setEditing(plant.id);
                          }}
                          aria-label=${`Edit plant ${String(plant.id)}`}
                        >
                          Edit
                        </button>
                      </td>`
                    }
                  </tr>`,
              )}
            </tbody>
          </table>
        </div>
        <nav class="pager" aria-label="Pages">
          <button type="button" disabled=${cursors.length <= 1} onClick=${() => setCursors(cursors.slice(0, -1))}>
            Previous
          </button>
          <button
            type="button"
            disabled=${page?.nextCursor === undefined}
            onClick=${() => setCursors([...cursors, page?.nextCursor])}
          >
            Next
          </button>
        </nav>
        <${Failure} error=${error} />
      </div>
      <aside class="side">
        <${LivePanel} api=${api} tag=${query.tag} onChange=${onLive} />
        ${
          writeReason === undefined
            ? html`<${CreatePlant} api=${api} onCreated=${reload} /><${ImportPanel} api=${api} onImported=${reload} />`
            : html`<${Withheld}
                reason=${`Creating, editing, deleting and importing plants are hidden. ${writeReason}`}
              />`
        }
        <${ExportButton} api=${api} q=${query.q} tag=${query.tag} />
      </aside>
    </div>
  </section>`;
}
