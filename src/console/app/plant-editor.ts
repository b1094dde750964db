/**
 * Editing one plant with a conditional request: the form keeps the ETag it was opened at and sends it in If-Match.
 * On 412 the plant as it is now is shown beside the operator's change, and they choose. Delete asks first.
 */
import { useEffect, useState } from 'preact/hooks';
import type { Api, Plant } from './api.js';
import { draftOf, EMPTY_DRAFT, patchOf, PLANT_FIELD_VIEWS, type Draft } from './plant-fields.js';
import { Confirm, Failure, html } from './ui.js';

interface Conflict {
  /** The plant as the store holds it now; undefined when it was deleted meanwhile. */
  readonly current: Plant | undefined;
  readonly etag: string;
}

export interface EditorProps {
  readonly api: Api;
  readonly id: bigint;
  readonly onSaved: (plant: Plant) => void;
  /** The plant is gone: deleted here, or (`byOthers`) found deleted by someone else. */
  readonly onDeleted: (id: bigint, byOthers: boolean) => void;
  readonly onClose: () => void;
}

/** Each field of `values` as a term and its value, for one side of a conflict. */
const fieldList = (side: 'theirs' | 'mine', values: Draft) =>
  PLANT_FIELD_VIEWS.map(
    ({ key, label }) =>
      html`<dt>${label}</dt>
        <dd data-side=${`${side}-${key}`}>${values[key] === '' ? '(none)' : values[key]}</dd>`,
  );

export function PlantEditor({ api, id, onSaved, onDeleted, onClose }: EditorProps) {
  const [etag, setEtag] = useState<string>();
  const [draft, setDraft] = useState<Draft>(EMPTY_DRAFT);
  const [conflict, setConflict] = useState<Conflict>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    api.plants.readPlant(id).then((read) => {
      if (read.kind !== 'plant') return;
      setEtag(read.etag);
      setDraft(draftOf(read.plant));
    }, setError);
  }, [id]);

  // Until the plant is read, there is nothing to edit: typing then would be overwritten.
  const loading = etag === undefined;
  useEffect(() => {
    // Keyboard users land in the form they opened, once it can be typed in.
    if (!loading) document.getElementById('edit-name')?.focus();
  }, [loading]);

  /** The plant as it is now, after a 412. */
  const showConflict = async () => {
    try {
      const read = await api.plants.readPlant(id);
      if (read.kind === 'plant') setConflict({ current: read.plant, etag: read.etag });
    } catch {
      setConflict({ current: undefined, etag: '' });
    }
  };

  const save = async (ifMatch: string | undefined) => {
    setBusy(true);
    setError(undefined);
    try {
      const outcome = await api.plants.updatePlant(id, patchOf(draft), ifMatch === undefined ? {} : { ifMatch });
      if (outcome.kind === 'precondition-failed') await showConflict();
      else onSaved(outcome.plant);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  const remove = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const outcome = await api.plants.deletePlant(id, etag === undefined ? {} : { ifMatch: etag });
      if (outcome.kind === 'precondition-failed') await showConflict();
      else onDeleted(id, false);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  const keepTheirs = () => {
    if (conflict?.current === undefined) {
      onDeleted(id, true);
      return;
    }
    setDraft(draftOf(conflict.current));
    setEtag(conflict.etag);
    setConflict(undefined);
    onSaved(conflict.current);
  };
  const applyMine = () => {
    const next = conflict?.etag;
    setEtag(next);
    setConflict(undefined);
    void save(next);
  };

  const field = (key: keyof Draft) => (event: Event) =>
    setDraft({ ...draft, [key]: (event.target as HTMLInputElement).value });
  const idText = String(id);
  return html`<section class="editor" aria-labelledby="editor-title">
    <h3 id="editor-title">Edit plant <code class="id">${idText}</code></h3>
    <form
      onSubmit=${(event: Event) => {
        event.preventDefault();
        void save(etag);
      }}
    >
      ${PLANT_FIELD_VIEWS.map(
        ({ key, label, optional }) =>
          html`<label for=${`edit-${key}`}>${optional ? `${label} (empty for none)` : label}</label>
            <input
              id=${`edit-${key}`}
              required=${!optional}
              disabled=${loading}
              value=${draft[key]}
              onInput=${field(key)}
            />`,
      )}
      <div class="actions">
        <button type="submit" disabled=${busy || etag === undefined || conflict !== undefined}>Save</button>
        <${Confirm}
          label="Delete"
          question=${`Delete plant ${idText}? This cannot be undone.`}
          confirm=${`Yes, delete plant ${idText}`}
          disabled=${busy || conflict !== undefined}
          onConfirm=${() => void remove()}
        />
        <button type="button" onClick=${onClose}>Close</button>
      </div>
    </form>
    ${
      conflict !== undefined &&
      html`<div class="conflict" role="alert">
        <p>
          <strong>Changed by someone else.</strong> The plant is no longer at the version you opened (HTTP 412); nothing
          was changed. Choose which to keep.
        </p>
        <div class="sides">
          <div>
            <h4>In the store now</h4>
            ${
              conflict.current === undefined
                ? html`<p>Deleted.</p>`
                : html`<dl>${fieldList('theirs', draftOf(conflict.current))}</dl>`
            }
            <button type="button" onClick=${keepTheirs}>Keep theirs</button>
          </div>
          <div>
            <h4>Your change</h4>
            <dl>${fieldList('mine', draft)}</dl>
            <button type="button" disabled=${conflict.current === undefined} onClick=${applyMine}>Apply mine</button>
          </div>
        </div>
      </div>`
    }
    <${Failure} error=${error} />
  </section>`;
}
