/**
 * The console's one door to the API: the typed client (packages/client) and, for what it has no method for,
 * openapi-fetch typed by the same generated types. Nothing here decides anything: every answer is the service's.
 */
import createClient from 'openapi-fetch';
import {
  createPlantStoreClient,
  PlantStoreError,
  type ImportSummary,
  type PlantStoreClient,
} from '../../../packages/client/src/index.js';
import { errorFromResponse } from '../../../packages/client/src/errors.js';
import { parseJson } from '../../../packages/client/src/json.js';
import type { components, paths } from '../../../packages/client/src/openapi-types.js';

export { PlantStoreConnectionError, PlantStoreError, toPlantId } from '../../../packages/client/src/index.js';
export type {
  CreatedToken,
  ImportSummary,
  Plant,
  PlantChangeEvent,
  PlantOrder,
  PlantPage,
  PlantStoreClient,
  Token,
} from '../../../packages/client/src/index.js';

export type Scope = components['schemas']['Token']['scopes'][number];
export type WebhookSubscription = components['schemas']['WebhookSubscription'];
export type WebhookSubscriptionChange = components['schemas']['WebhookSubscriptionPatch'];
export type CreatedWebhookSubscription = components['schemas']['CreatedWebhookSubscription'];
export type WebhookDelivery = components['schemas']['WebhookDelivery'];
export type EventType = WebhookSubscription['eventTypes'][number];
export const EVENT_TYPES: readonly EventType[] = [
  'plant.created',
  'plant.updated',
  'plant.deleted',
  'webhook.disabled',
];
export const SCOPES: readonly Scope[] = ['plants:read', 'plants:write', 'admin'];

export interface Api {
  readonly plants: PlantStoreClient;
  readonly raw: ReturnType<typeof createClient<paths>>;
  readonly token: string;
  /** fetch with the token, for what neither client covers (/metrics). */
  readonly fetch: typeof globalThis.fetch;
  /** Called with the service's message when a request is answered 401 (an import's upload included). */
  readonly onRefused: (message: string) => void;
}

/** The message of a 401's Error record, or its status line. */
async function refusal(response: Response): Promise<string> {
  const record = (await response
    .clone()
    .json()
    .catch(() => ({}))) as { message?: unknown };
  return typeof record.message === 'string' ? record.message : `HTTP ${response.status}`;
}

/**
 * The clients for `token`. Every answer passes through one fetch, so a 401 anywhere (the token revoked or expired
 * meanwhile) reaches `onRefused` once, whichever screen asked.
 */
export function connect(token: string, onRefused: (message: string) => void = () => undefined): Api {
  const baseUrl = location.origin;
  const watched: typeof globalThis.fetch = async (input, init) => {
    const response = await globalThis.fetch(input, init);
    if (response.status === 401) onRefused(await refusal(response));
    return response;
  };
  const fetchWithToken: typeof globalThis.fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${token}`);
    return watched(input, { ...init, headers });
  };
  return {
    plants: createPlantStoreClient({ baseUrl, token, fetch: watched }),
    raw: createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${token}` }, fetch: watched }),
    token,
    fetch: fetchWithToken,
    onRefused,
  };
}

/** The data of an openapi-fetch answer, or the service's Error record thrown as a PlantStoreError. */
export async function answer<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw errorFromResponse(response, error);
  return data as T;
}

export interface ImportProgress {
  readonly sent: number;
  readonly total: number;
}

/**
 * POST /plants/import with upload progress. XMLHttpRequest rather than fetch: a browser reports upload progress
 * only for it (a streamed fetch body needs HTTP/2).
 */
export function importFile(
  api: Api,
  file: Blob,
  format: 'csv' | 'ndjson',
  mode: 'all' | 'skip',
  onProgress: (progress: ImportProgress) => void,
): Promise<ImportSummary> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', `/plants/import?mode=${mode}`);
    request.setRequestHeader('authorization', `Bearer ${api.token}`);
    request.setRequestHeader('content-type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson');
    request.upload.onprogress = (event) => onProgress({ sent: event.loaded, total: event.total || file.size });
    request.onerror = () => reject(new Error('the connection to the service failed during the import'));
    request.onload = () => {
      const body = request.responseText === '' ? null : parseJson(request.responseText);
      if (request.status === 200) {
        resolve(body as ImportSummary);
        return;
      }
      const record = body as { error?: number; message?: string } | null;
      if (request.status === 401) api.onRefused(record?.message ?? 'HTTP 401');
      reject(new PlantStoreError(request.status, record?.error ?? 0, record?.message ?? `HTTP ${request.status}`));
    };
    request.send(file);
  });
}
