/**
 * The changes panel: GET /events through the client's watchChanges (fetch with the Authorization header, resuming
 * with Last-Event-ID after a dropped connection), filtered by the table's tag. Each change is also handed to the
 * table so rows update in place.
 */
import { useEffect, useState } from 'preact/hooks';
import type { Api, PlantChangeEvent } from './api.js';
import { html } from './ui.js';

const KEPT = 50;

export function LivePanel({
  api,
  tag,
  onChange,
}: {
  api: Api;
  tag: string;
  onChange: (event: PlantChangeEvent) => void;
}) {
  const [events, setEvents] = useState<PlantChangeEvent[]>([]);
  const [state, setState] = useState('connecting');

  useEffect(() => {
    const stop = new AbortController();
    setState('connecting');
    (async () => {
      for await (const event of api.plants.watchChanges({
        signal: stop.signal,
        ...(tag === '' ? {} : { tag }),
        onReconnect: (reconnection) =>
          setState(`reconnecting in ${Math.round(reconnection.delayMs / 1000)} s: ${reconnection.reason}`),
      })) {
        setState('live');
        setEvents((earlier) => [event, ...earlier].slice(0, KEPT));
        onChange(event);
      }
    })().catch((error: unknown) => {
      if (!stop.signal.aborted) setState(`stopped: ${error instanceof Error ? error.message : String(error)}`);
    });
    // The stream answers its headers before any change: call it live once connected.
    const connected = setTimeout(() => setState((s) => (s === 'connecting' ? 'live' : s)), 1500);
    return () => {
      clearTimeout(connected);
      stop.abort();
    };
  }, [api, tag]);

  return html`<section class="panel live" aria-labelledby="live-title">
    <h3 id="live-title">Changes <span class="state" data-state=${state.split(' ')[0]}>${state}</span></h3>
    ${tag !== '' && html`<p class="hint">Only plants tagged “${tag}”.</p>`}
    <ol aria-live="polite" class="changes">
      ${events.map(
        (event) =>
          html`<li key=${event.id}>
            <span class="type">${event.type.replace('plant.', '')}</span>
            <code class="id">${String(event.plant.id)}</code>
            ${'name' in event.plant ? ` ${event.plant.name}` : ''}
          </li>`,
      )}
    </ol>
  </section>`;
}
