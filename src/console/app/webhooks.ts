/**
 * Webhook subscriptions: create, edit (URL, description), disable and enable, delete, rotate the secret (shown
 * once), health, the delivery log and retry.
 */
import { useEffect, useState } from 'preact/hooks';
import {
  answer,
  EVENT_TYPES,
  type Api,
  type EventType,
  type WebhookDelivery,
  type WebhookSubscription,
  type WebhookSubscriptionChange,
} from './api.js';
import { Confirm, Failure, html, Notice, Secret, when, withheld, Withheld, type Session } from './ui.js';

/**
 * A delivery's state as an operator reads it: the service's pending covers both one not tried yet and one whose
 * attempts failed and that waits for its next (retrying), which is not at all the same news.
 */
type DeliveryState = 'succeeded' | 'failed' | 'retrying' | 'pending';
const stateOf = (d: WebhookDelivery): DeliveryState =>
  d.status === 'pending' && d.attemptCount > 0 ? 'retrying' : d.status;

/** What the last attempt got: the HTTP status, or that no answer came. */
const lastAnswer = (d: WebhookDelivery): string => {
  const last = d.attempts[d.attempts.length - 1];
  return last === undefined ? 'none recorded' : String(last.responseStatus ?? 'no answer');
};

/** What the last deliveries say, at a glance: their states counted, and what the newest retrying one last got. */
function health(deliveries: readonly WebhookDelivery[] | undefined): string {
  if (deliveries === undefined) return '…';
  const newest = deliveries[0];
  if (newest === undefined) return 'no deliveries yet';
  const count = (state: DeliveryState) => deliveries.filter((d) => stateOf(d) === state).length;
  const retrying = deliveries.find((d) => stateOf(d) === 'retrying');
  const retries =
    retrying === undefined ? '0 retrying' : `${count('retrying')} retrying (last: ${lastAnswer(retrying)})`;
  return (
    `last ${stateOf(newest)}; of the last ${deliveries.length}: ${count('succeeded')} succeeded, ` +
    `${count('failed')} failed, ${retries}, ${count('pending')} not attempted yet`
  );
}

/** The plant a delivery's event is about (its id, and its name unless it was deleted). */
function DeliveryPlant({ delivery }: { delivery: WebhookDelivery }) {
  if (delivery.plantId === undefined) return null;
  return html`<span class="plant"
    >plant <code class="id">${String(delivery.plantId)}</code>${
      delivery.plantName === undefined ? '' : ` ${delivery.plantName}`
    }</span
  >`;
}

/** One attempt as the service recorded it: when, the status (if any), the latency and the error. */
function attemptText(a: WebhookDelivery['attempts'][number]): string {
  const error = a.error === undefined ? '' : ` — ${a.error}`;
  return `#${a.attempt} ${when(a.attemptedAt)}: ${a.responseStatus ?? 'no answer'}, ${a.latencyMs} ms${error}`;
}

function DeliveryLog({ api, subscription }: { api: Api; subscription: WebhookSubscription }) {
  const [deliveries, setDeliveries] = useState<WebhookDelivery[]>();
  const [error, setError] = useState<unknown>();
  // Through the typed client: it reads plantId exactly (JSON.parse would round an int64).
  const load = () => api.plants.listWebhookDeliveries(subscription.id, { limit: 50 }).then(setDeliveries, setError);
  useEffect(() => {
    void load();
  }, [subscription.id]);
  const retry = async (delivery: WebhookDelivery) => {
    setError(undefined);
    try {
      await api.plants.retryWebhookDelivery(subscription.id, delivery.id);
      await load();
    } catch (failure) {
      setError(failure);
    }
  };
  return html`<div class="deliveries">
    <button type="button" onClick=${load}>Refresh log</button>
    <table class="cards">
      <caption>
        Deliveries to ${subscription.url}, newest first
      </caption>
      <thead>
        <tr>
          <th scope="col">Event</th>
          <th scope="col">Status</th>
          <th scope="col">Attempts (status, latency, error)</th>
          <th scope="col"><span class="visually-hidden">Actions</span></th>
        </tr>
      </thead>
      <tbody>
        ${deliveries?.map(
          (d) =>
            html`<tr key=${d.id} data-delivery=${d.id}>
              <td>${d.eventType} <${DeliveryPlant} delivery=${d} /><br /><small>${when(d.createdAt)}</small></td>
              <td data-label="Status" class=${`status-${stateOf(d)}`}>
                ${stateOf(d)}${
                  d.nextAttemptAt === undefined ? '' : html`<br /><small>next ${when(d.nextAttemptAt)}</small>`
                }
              </td>
              <td data-label="Attempts">
                <ol class="attempts">
                  ${d.attempts.map((a) => html`<li>${attemptText(a)}</li>`)}
                </ol>
              </td>
              <td class="row-actions"><button type="button" onClick=${() => retry(d)}>Retry</button></td>
            </tr>`,
        )}
      </tbody>
    </table>
    <${Failure} error=${error} />
  </div>`;
}

function Subscription({
  api,
  subscription,
  onChanged,
}: {
  api: Api;
  subscription: WebhookSubscription;
  /** The subscription changed (or, with a message saying so, was deleted): the list is read again. */
  onChanged: (message?: string) => void;
}) {
  const [open, setOpen] = useState(false);
  const [recent, setRecent] = useState<WebhookDelivery[]>();
  const [secret, setSecret] = useState<string>();
  const [error, setError] = useState<unknown>();
  const [editing, setEditing] = useState(false);
  const [url, setUrl] = useState(subscription.url);
  const [description, setDescription] = useState(subscription.description ?? '');
  const [tag, setTag] = useState(subscription.tag ?? '');
  const [rate, setRate] = useState(subscription.maxPerSecond === undefined ? '' : String(subscription.maxPerSecond));
  useEffect(() => {
    api.plants.listWebhookDeliveries(subscription.id, { limit: 20 }).then(setRecent, setError);
  }, [subscription.id, open]);
  const act = async (what: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await what();
    } catch (failure) {
      setError(failure);
    }
  };
  const rotate = () =>
    act(async () => {
      const rotated = await answer(
        api.raw.POST('/webhooks/{id}/rotate-secret', { params: { path: { id: subscription.id } } }),
      );
      setSecret(rotated.secret);
    });
  const remove = () =>
    act(async () => {
      await answer(api.raw.DELETE('/webhooks/{id}', { params: { path: { id: subscription.id } } }));
      onChanged(`Deleted the subscription of ${subscription.url}.`);
    });
  const change = (body: WebhookSubscriptionChange) =>
    act(async () => {
      await answer(api.raw.PATCH('/webhooks/{id}', { params: { path: { id: subscription.id } }, body }));
      setEditing(false);
      onChanged();
    });
  const save = (event: Event) => {
    event.preventDefault();
    // Digits only, so a typo never reaches JSON as null (which would remove the limit); the service checks the range.
    if (!/^\d*$/.test(rate.trim())) {
      setError(new Error('Most deliveries per second must be a whole number, or empty for no limit.'));
      return;
    }
    void change({
      url,
      description: description === '' ? null : description,
      tag: tag === '' ? null : tag,
      maxPerSecond: rate.trim() === '' ? null : Number(rate),
    });
  };
  const state = subscription.enabled
    ? 'enabled'
    : `disabled${subscription.disabledReason ? `: ${subscription.disabledReason}` : ''}` +
      (subscription.disabledAt ? ` (${when(subscription.disabledAt)})` : '');
  return html`<li class="subscription" data-webhook=${subscription.id}>
    <h3>${subscription.url}</h3>
    ${subscription.description !== undefined && html`<p class="description">${subscription.description}</p>`}
    <p class="events">
      <small
        >${subscription.eventTypes.join(', ')}${subscription.tag === undefined ? '' : ` (tag ${subscription.tag})`}${
          subscription.maxPerSecond === undefined ? '' : ` (at most ${subscription.maxPerSecond} per second)`
        }</small
      >
    </p>
    <p class="state" data-enabled=${String(subscription.enabled)}>State: ${state}</p>
    <p class="health">Health: ${health(recent)}</p>
    <div class="actions">
      <button type="button" aria-expanded=${open} onClick=${() => setOpen(!open)}>Delivery log</button>
      <button type="button" aria-expanded=${editing} onClick=${() => setEditing(!editing)}>Edit</button>
      <button type="button" onClick=${() => change({ enabled: !subscription.enabled })}>
        ${subscription.enabled ? 'Disable' : 'Enable'}
      </button>
      <button type="button" onClick=${rotate}>Rotate secret</button>
      <${Confirm}
        label="Delete"
        name=${`Delete the subscription of ${subscription.url}`}
        question=${`Delete the subscription of ${subscription.url}? Its pending deliveries and its log go with it; this cannot be undone.`}
        confirm="Yes, delete it"
        onConfirm=${() => void remove()}
      />
    </div>
    ${
      editing &&
      html`<form class="panel" onSubmit=${save} aria-label=${`Edit ${subscription.url}`}>
        <label for=${`url-${subscription.id}`}>New URL</label>
        <input
          id=${`url-${subscription.id}`}
          type="url"
          required
          value=${url}
          onInput=${(e: Event) => setUrl((e.target as HTMLInputElement).value)}
        />
        <label for=${`description-${subscription.id}`}>New description (empty removes it)</label>
        <input
          id=${`description-${subscription.id}`}
          value=${description}
          onInput=${(e: Event) => setDescription((e.target as HTMLInputElement).value)}
        />
        <label for=${`tag-${subscription.id}`}>Only plants with the tag (empty: every plant)</label>
        <input
          id=${`tag-${subscription.id}`}
          value=${tag}
          onInput=${(e: Event) => setTag((e.target as HTMLInputElement).value)}
        />
        <label for=${`rate-${subscription.id}`}>Most deliveries per second (empty: no limit)</label>
        <input
          id=${`rate-${subscription.id}`}
          inputmode="numeric"
          value=${rate}
          onInput=${(e: Event) => setRate((e.target as HTMLInputElement).value)}
        />
        <button type="submit">Save</button>
      </form>`
    }
    ${secret !== undefined && html`<${Secret} label="New signing secret." secret=${secret} />`}
    ${open && html`<${DeliveryLog} api=${api} subscription=${subscription} />`}
    <${Failure} error=${error} />
  </li>`;
}

export function WebhooksScreen({ api, session }: { api: Api; session: Session }) {
  const reason = withheld(session, 'admin');
  const [subscriptions, setSubscriptions] = useState<WebhookSubscription[]>();
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [tag, setTag] = useState('');
  const [types, setTypes] = useState<EventType[]>(['plant.created']);
  const [created, setCreated] = useState<string>();
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<string>();
  const load = () => answer(api.raw.GET('/webhooks')).then(setSubscriptions, setError);
  const changed = (message?: string) => {
    setDone(message);
    void load();
  };
  useEffect(() => {
    if (reason === undefined) void load();
  }, []);
  if (reason !== undefined)
    return html`<section>
      <h2>Webhooks</h2>
      <${Withheld} reason=${reason} />
    </section>`;

  const create = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    try {
      const body = {
        url,
        eventTypes: types,
        ...(description === '' ? {} : { description }),
        ...(tag === '' ? {} : { tag }),
      };
      const subscription = await answer(api.raw.POST('/webhooks', { body }));
      setCreated(subscription.secret);
      await load();
    } catch (failure) {
      setError(failure);
    }
  };
  const toggle = (type: EventType) => (e: Event) =>
    setTypes((e.target as HTMLInputElement).checked ? [...types, type] : types.filter((t) => t !== type));
  return html`<section aria-labelledby="webhooks-title">
    <h2 id="webhooks-title">Webhooks</h2>
    <form class="panel" onSubmit=${create} aria-labelledby="new-webhook">
      <h3 id="new-webhook">New subscription</h3>
      <label for="webhook-url">URL</label>
      <input
        id="webhook-url"
        type="url"
        required
        value=${url}
        onInput=${(e: Event) => setUrl((e.target as HTMLInputElement).value)}
      />
      <label for="webhook-description">Description (optional)</label>
      <input
        id="webhook-description"
        value=${description}
        onInput=${(e: Event) => setDescription((e.target as HTMLInputElement).value)}
      />
      <label for="webhook-tag">Only plants with the tag (optional: a plant entering, in or leaving it)</label>
      <input id="webhook-tag" value=${tag} onInput=${(e: Event) => setTag((e.target as HTMLInputElement).value)} />
      <fieldset>
        <legend>Events</legend>
        ${EVENT_TYPES.map(
          (type) =>
            html`<label class="check"
              ><input type="checkbox" checked=${types.includes(type)} onChange=${toggle(type)} /> ${type}</label
            >`,
        )}
      </fieldset>
      <button type="submit">Subscribe</button>
      ${created !== undefined && html`<${Secret} label="Signing secret." secret=${created} />`}
    </form>
    ${done !== undefined && html`<${Notice}>${done}</${Notice}>`}
    <${Failure} error=${error} />
    <ul class="subscriptions">
      ${subscriptions?.map(
        (s) => html`<${Subscription} key=${s.id} api=${api} subscription=${s} onChanged=${changed} />`,
      )}
    </ul>
    ${subscriptions?.length === 0 && html`<p>No subscriptions.</p>`}
  </section>`;
}
