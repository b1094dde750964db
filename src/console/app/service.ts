/** The service: version, store, readiness, and live figures from /metrics (admin), refreshed every few seconds. */
import { useEffect, useState } from 'preact/hooks';
import { PlantStoreError, type Api } from './api.js';
import { label, quantile, samples, total } from './metrics-text.js';
import { describeFailure, html, withheld, Withheld, type Session } from './ui.js';

const REFRESH_MS = 5000;

interface Figures {
  readonly at: number;
  readonly requests: number | undefined;
  readonly text: string;
}

/** /readyz: whether the service is ready, and the service's version, which its body carries either way. */
async function readyState(): Promise<{ ready: string; version: string | undefined }> {
  const response = await fetch('/readyz');
  const body = (await response.json().catch(() => ({}))) as { message?: string; version?: string };
  if (response.ok) return { ready: 'ready', version: body.version };
  const reason = body.message === undefined ? '' : `: ${body.message}`;
  return { ready: `not ready (HTTP ${response.status}${reason})`, version: body.version };
}

/** The age of the oldest pending delivery; with none pending there is no age (the gauge then reads 0). */
function oldestText(pending: number | undefined, oldest: number | undefined): string | undefined {
  if (pending === 0) return 'none pending';
  return oldest === undefined ? undefined : `${Math.round(oldest)} s`;
}

export function ServiceScreen({ api, session }: { api: Api; session: Session }) {
  const metricsReason = withheld(session, 'admin');
  const [version, setVersion] = useState<string>();
  const [ready, setReady] = useState<string>();
  const [figures, setFigures] = useState<Figures[]>([]);
  const [error, setError] = useState<string>();

  useEffect(() => {
    const tick = async () => {
      const state = await readyState().catch((e: unknown) => ({
        ready: `unreachable: ${describeFailure(e)}`,
        version: undefined,
      }));
      setReady(state.ready);
      if (state.version !== undefined) setVersion(state.version);
      if (metricsReason !== undefined) return;
      const response = await api.fetch('/metrics');
      if (!response.ok) {
        const record = (await response.json().catch(() => ({}))) as { error?: number; message?: string };
        setError(
          describeFailure(
            new PlantStoreError(response.status, record.error ?? 0, record.message ?? response.statusText),
          ),
        );
        return;
      }
      const text = await response.text();
      const requests = total(samples(text), 'plantstore_http_requests_total');
      setFigures((earlier) => [...earlier.slice(-1), { at: Date.now(), requests, text }]);
    };
    void tick();
    const timer = setInterval(() => void tick(), REFRESH_MS);
    return () => clearInterval(timer);
  }, []);

  const latest = figures[figures.length - 1];
  const previous = figures.length > 1 ? figures[0] : undefined;
  const all = latest === undefined ? [] : samples(latest.text);
  const rate =
    latest?.requests !== undefined && previous?.requests !== undefined
      ? ((latest.requests - previous.requests) / ((latest.at - previous.at) / 1000)).toFixed(1)
      : undefined;
  const p99 = quantile(all, 'plantstore_http_request_duration_seconds', 0.99);
  const pending = total(all, 'plantstore_webhook_deliveries_pending');
  const oldest = total(all, 'plantstore_webhook_oldest_pending_seconds');
  const streams = total(all, 'plantstore_event_streams_open');
  const figure = (name: string, value: string | undefined) =>
    html`<div class="figure">
      <dt>${name}</dt>
      <dd>${value ?? 'not reported'}</dd>
    </div>`;

  return html`<section aria-labelledby="service-title">
    <h2 id="service-title">Service</h2>
    <dl class="figures">
      ${figure('Version', version)} ${figure('Readiness', ready)}
      ${figure('Store', label(all, 'plantstore_info', 'store') ?? (metricsReason === undefined ? undefined : 'needs admin'))}
    </dl>
    <h3>Live figures</h3>
    ${
      metricsReason !== undefined
        ? html`<${Withheld} reason=${`The figures come from /metrics. ${metricsReason}`} />`
        : html`<dl class="figures">
            ${figure('Requests per second', rate ?? (latest === undefined ? undefined : 'measuring…'))}
            ${figure('p99 latency (since start, bucket bound)', p99 === undefined ? undefined : p99 === Infinity ? 'over the largest bucket' : `≤ ${Math.round(p99 * 1000)} ms`)}
            ${figure('Webhook deliveries pending', pending === undefined ? undefined : String(pending))}
            ${figure('Oldest pending delivery', oldestText(pending, oldest))}
            ${figure('Open event streams', streams === undefined ? undefined : String(streams))}
          </dl>`
    }
    ${error !== undefined && html`<p class="failure" role="alert">${error}</p>`}
  </section>`;
}
