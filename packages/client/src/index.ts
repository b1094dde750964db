/**
 * The typed Plant Store client (docs/client.md), typed from the OpenAPI document
 * (./openapi-types.ts, generated) and calling through openapi-fetch.
 *
 *   const store = createPlantStoreClient({ baseUrl: 'http://127.0.0.1:8080', token: process.env.PLANTSTORE_TOKEN });
 *   await store.createPlant({ id: 9223372036854775807n, name: 'Monstera deliciosa' });
 *
 * Ids come back as bigint, parsed without rounding: the API's ids are int64, beyond a
 * number's 2^53. A failed precondition is an outcome, not an exception: it is an
 * expected answer to a conditional write.
 */
import createClient from 'openapi-fetch';
import { bulkOperations, type BulkOperations } from './bulk.js';
import type { PlantFilter } from './filter.js';
import { errorFromResponse, PlantStoreConnectionError, type PlantStoreError } from './errors.js';
import { eventOperations, type EventOperations } from './events.js';
import { parseJson, stringifyJson } from './json.js';
import { webhookOperations, type WebhookOperations } from './webhooks.js';
import type { components, paths } from './openapi-types.js';
import { tokenOperations, type TokenOperations } from './tokens.js';

export type { BulkFormat, ExportOptions, ImportBody, ImportOptions, ImportProblem, ImportSummary } from './bulk.js';
export { PlantStoreConnectionError, PlantStoreError } from './errors.js';
export type { PlantFilter } from './filter.js';
export type { EventType, PlantChangeEvent, Reconnection, WatchOptions } from './events.js';
export type { CreatedToken, NewToken, Token, TokenOperations } from './tokens.js';
export type { components, operations, paths } from './openapi-types.js';
// JSON.stringify throws on a bigint id and JSON.parse rounds one: these keep int64 ids exact.
export { parseJson, stringifyJson } from './json.js';
export type {
  CreatedWebhookSubscription,
  NewWebhookSubscription,
  WebhookChangeOutcome,
  WebhookDelivery,
  WebhookEventTypes,
  WebhookRecovery,
  WebhookSubscription,
  WebhookSubscriptionChange,
  WebhookTestOutcome,
} from './webhooks.js';

/** A plant as read back, with its id. */
export type Plant = components['schemas']['StoredPlant'];
/** What a create returns: the plant without its id (the caller chose it). */
export type CreatedPlant = components['schemas']['Plant'];
export type ErrorRecord = components['schemas']['Error'];

/** An int64 id: a bigint, a number that is a safe integer, or a decimal string. */
export type PlantId = bigint | number | string;

// The plant bodies are the service's own schemas (generated from its OpenAPI document), so a field it adds is here too.

/** A plant to create: NewPlant, its id given as any PlantId. */
export type NewPlant = Omit<components['schemas']['NewPlant'], 'id'> & { readonly id: PlantId };

/** A JSON Merge Patch of a plant: a field left out is kept; an optional one null (`tag: null`) is removed. */
export type PlantChange = Omit<components['schemas']['PlantPatch'], 'id'>;

/** A plant's new fields: an optional one left out is removed. */
export type Replacement = Omit<components['schemas']['PlantReplacement'], 'id'>;

export interface Preconditions {
  /** An ETag (or `*`): the write happens only if the plant is at that version. */
  readonly ifMatch?: string;
}

export type ReadOutcome =
  | { readonly kind: 'plant'; readonly plant: Plant; readonly etag: string }
  /** The plant is still at the version `ifNoneMatch` named (HTTP 304). */
  | { readonly kind: 'not-modified'; readonly etag: string };

export type ChangeOutcome =
  /** The plant as it is now (a change that changed nothing keeps its ETag). */
  | { readonly kind: 'updated'; readonly plant: Plant; readonly etag: string }
  /** HTTP 412: the plant is not at the version `ifMatch` named (or is gone); nothing changed. */
  | { readonly kind: 'precondition-failed'; readonly error: PlantStoreError };

export type DeleteOutcome =
  { readonly kind: 'deleted' } | { readonly kind: 'precondition-failed'; readonly error: PlantStoreError };

/** The orders of a list: by id or by name (folded: see docs/finding-plants.md), `-` for descending. */
export type PlantOrder = 'id' | '-id' | 'name' | '-name';

/** Which plants a list or a count is about. */
export interface ListPlantsOptions extends PlantFilter {
  /** 1 to 1000; the service's default is 100. */
  readonly limit?: number;
  /** 'id' when left out. */
  readonly sort?: PlantOrder;
  /** Where the page starts: a page's `nextCursor` (valid with the same sort, q and tag). */
  readonly cursor?: string;
  /** With sort 'id' only: plants with a greater id (the cursor of earlier releases). */
  readonly after?: PlantId;
  /** Also count every matching plant (`total`); 'estimated' lets PostgreSQL answer from its statistics. */
  readonly count?: 'exact' | 'estimated';
}

/** How many plants match; `exact` false when it is PostgreSQL's estimate. */
export interface PlantCount {
  readonly count: number;
  readonly exact: boolean;
}

export interface PlantPage {
  readonly plants: Plant[];
  /** Pass as `cursor` (with the same sort, q and tag) to get the next page; undefined on the last page. */
  readonly nextCursor: string | undefined;
  /** When `count` was asked. */
  readonly total?: PlantCount;
}

export interface PlantStoreClientOptions {
  /** Where the service listens, e.g. http://127.0.0.1:8080. */
  readonly baseUrl: string;
  /** A bearer token (pst_...); health and readiness need none. */
  readonly token?: string;
  /** Give up on a request after this long (default 30 s). */
  readonly timeoutMs?: number;
  /** Another fetch implementation (tests, proxies). */
  readonly fetch?: typeof globalThis.fetch;
}

export interface PlantStoreClient extends BulkOperations, EventOperations, TokenOperations, WebhookOperations {
  createPlant(plant: NewPlant): Promise<CreatedPlant>;
  getPlant(id: PlantId): Promise<Plant>;
  /** The plant with its ETag; with `ifNoneMatch`, 'not-modified' while it is still at that version. */
  readPlant(id: PlantId, options?: { readonly ifNoneMatch?: string }): Promise<ReadOutcome>;
  /** PATCH: merges `change` into the plant. */
  updatePlant(id: PlantId, change: PlantChange, options?: Preconditions): Promise<ChangeOutcome>;
  /** PUT: replaces the plant's name and tag. */
  replacePlant(id: PlantId, plant: Replacement, options?: Preconditions): Promise<ChangeOutcome>;
  listPlants(options?: ListPlantsOptions): Promise<PlantPage>;
  /** Every plant matching `q` and `tag`, in the `sort` order, following the pages. */
  allPlants(options?: Omit<ListPlantsOptions, 'after' | 'cursor' | 'count'>): AsyncIterable<Plant>;
  /** How many plants match (a one-plant page with `Prefer: count=...`). */
  countPlants(filter?: PlantFilter & { readonly how?: 'exact' | 'estimated' }): Promise<PlantCount>;
  deletePlant(id: PlantId, options?: Preconditions): Promise<DeleteOutcome>;
  /** Resolves when the service is ready (its store answers); throws otherwise. */
  ready(): Promise<void>;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** An id as a bigint; throws RangeError for anything that is not an int64. */
export function toPlantId(value: PlantId): bigint {
  let id: bigint;
  if (typeof value === 'bigint') id = value;
  else if (typeof value === 'number') {
    // A number beyond 2^53 has already been rounded: refusing it is the only exact answer.
    if (!Number.isSafeInteger(value))
      throw new RangeError(`plant id ${value} is not a safe integer; pass larger ids as a bigint or a string`);
    id = BigInt(value);
  } else {
    if (!/^-?(0|[1-9][0-9]*)$/.test(value.trim())) throw new RangeError(`plant id '${value}' is not an integer`);
    id = BigInt(value.trim());
  }
  if (id < INT64_MIN || id > INT64_MAX) throw new RangeError(`plant id ${id} is outside the int64 range`);
  return id;
}

/** The `cursor` of the Link: <...>; rel="next" header, if any. */
function nextCursor(response: Response): string | undefined {
  const link = response.headers.get('link');
  const target = link === null ? undefined : /<([^>]*)>\s*;\s*rel="?next"?/.exec(link)?.[1];
  return (target === undefined ? null : new URL(target, 'http://link.invalid').searchParams.get('cursor')) ?? undefined;
}

/** X-Total-Count and Preference-Applied, when the service counted. */
function totalOf(response: Response): PlantCount | undefined {
  const count = response.headers.get('x-total-count');
  if (count === null) return undefined;
  return { count: Number(count), exact: response.headers.get('preference-applied') !== 'count=estimated' };
}

interface Outcome {
  readonly data?: string;
  readonly error?: unknown;
  readonly response: Response;
}

export function createPlantStoreClient(options: PlantStoreClientOptions): PlantStoreClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? 30_000;
  const api = createClient<paths>({
    baseUrl,
    headers: options.token === undefined ? {} : { authorization: `Bearer ${options.token}` },
    bodySerializer: stringifyJson,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });

  /** Sends, turns failures into errors (but statuses in `expected`), and returns the response with its text. */
  async function send(
    call: (signal: AbortSignal) => Promise<Outcome>,
    expected: readonly number[] = [],
  ): Promise<{ text: string | undefined; response: Response; error?: PlantStoreError }> {
    let outcome: Outcome;
    try {
      outcome = await call(AbortSignal.timeout(timeoutMs));
    } catch (error) {
      if (error instanceof DOMException && error.name === 'TimeoutError') {
        throw new PlantStoreConnectionError(baseUrl, new Error(`no answer within ${timeoutMs} ms`));
      }
      throw new PlantStoreConnectionError(baseUrl, error);
    }
    if (!outcome.response.ok) {
      const error = errorFromResponse(outcome.response, outcome.error);
      if (!expected.includes(outcome.response.status)) throw error;
      return { text: undefined, response: outcome.response, error };
    }
    return { text: outcome.data, response: outcome.response };
  }

  // The service answers with its documented schema; parsing trusts it (one cast, here).
  const decode = <T>(text: string | undefined): T => parseJson(text ?? 'null') as T;

  const listPlants = async (query: ListPlantsOptions = {}): Promise<PlantPage> => {
    const { text, response } = await send((signal) =>
      api.GET('/plants', {
        params: {
          query: {
            ...(query.limit === undefined ? {} : { limit: query.limit }),
            ...(query.sort === undefined ? {} : { sort: query.sort }),
            ...(query.q === undefined ? {} : { q: query.q }),
            // An array is sent as the parameter repeated (tag=a&tag=b).
            ...(query.tag === undefined ? {} : { tag: [query.tag].flat() }),
            ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
            ...(query.after === undefined ? {} : { after: toPlantId(query.after) }),
          },
          header: query.count === undefined ? {} : { prefer: `count=${query.count}` },
        },
        parseAs: 'text',
        signal,
      }),
    );
    const total = totalOf(response);
    return {
      plants: decode<Plant[]>(text),
      nextCursor: nextCursor(response),
      ...(total === undefined ? {} : { total }),
    };
  };

  const etagOf = (response: Response): string => response.headers.get('etag') ?? '';

  /** The outcome of a PATCH or PUT: the plant and its ETag, or the 412. */
  const changeOutcome = ({
    text,
    response,
    error,
  }: {
    text: string | undefined;
    response: Response;
    error?: PlantStoreError;
  }): ChangeOutcome =>
    error === undefined
      ? { kind: 'updated', plant: decode<Plant>(text), etag: etagOf(response) }
      : { kind: 'precondition-failed', error };

  const ifMatch = (options: Preconditions | undefined) =>
    options?.ifMatch === undefined ? {} : { 'if-match': options.ifMatch };

  return {
    async createPlant(plant) {
      const body = { ...plant, id: toPlantId(plant.id) };
      const { text } = await send((signal) => api.POST('/plants', { body, parseAs: 'text', signal }));
      return decode<CreatedPlant>(text);
    },

    async getPlant(id) {
      const path = { id: toPlantId(id) };
      const { text } = await send((signal) => api.GET('/plants/{id}', { params: { path }, parseAs: 'text', signal }));
      return decode<Plant>(text);
    },

    async readPlant(id, options = {}) {
      const path = { id: toPlantId(id) };
      const header = options.ifNoneMatch === undefined ? {} : { 'if-none-match': options.ifNoneMatch };
      const { text, response } = await send(
        (signal) => api.GET('/plants/{id}', { params: { path, header }, parseAs: 'text', signal }),
        [304],
      );
      if (response.status === 304) return { kind: 'not-modified', etag: etagOf(response) };
      return { kind: 'plant', plant: decode<Plant>(text), etag: etagOf(response) };
    },

    async updatePlant(id, change, options) {
      const path = { id: toPlantId(id) };
      const body = change;
      return changeOutcome(
        await send(
          (signal) =>
            api.PATCH('/plants/{id}', {
              params: { path, header: ifMatch(options) },
              body,
              headers: { 'content-type': 'application/merge-patch+json' },
              parseAs: 'text',
              signal,
            }),
          [412],
        ),
      );
    },

    async replacePlant(id, plant, options) {
      const path = { id: toPlantId(id) };
      const body = plant;
      return changeOutcome(
        await send(
          (signal) =>
            api.PUT('/plants/{id}', { params: { path, header: ifMatch(options) }, body, parseAs: 'text', signal }),
          [412],
        ),
      );
    },

    listPlants,

    async *allPlants(query = {}) {
      let cursor: string | undefined;
      do {
        const page = await listPlants({ ...query, ...(cursor === undefined ? {} : { cursor }) });
        yield* page.plants;
        cursor = page.nextCursor;
      } while (cursor !== undefined);
    },

    async countPlants({ how = 'exact', ...filter } = {}) {
      const { total } = await listPlants({ ...filter, limit: 1, count: how });
      if (total === undefined)
        throw new Error('the service answered without X-Total-Count: is it older than this client?');
      return total;
    },

    async deletePlant(id, options) {
      const path = { id: toPlantId(id) };
      const { error } = await send(
        (signal) => api.DELETE('/plants/{id}', { params: { path, header: ifMatch(options) }, parseAs: 'text', signal }),
        [412],
      );
      return error === undefined ? { kind: 'deleted' } : { kind: 'precondition-failed', error };
    },

    async ready() {
      await send((signal) => api.GET('/readyz', { parseAs: 'text', signal }));
    },

    ...bulkOperations(api, baseUrl, timeoutMs),
    ...eventOperations(api, baseUrl, timeoutMs),
    ...tokenOperations(api, baseUrl, timeoutMs),
    ...webhookOperations(api, send, decode),
  };
}
