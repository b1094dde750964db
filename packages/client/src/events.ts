/**
 * watchChanges: GET /events as an async iterable that outlives any one connection.
 *
 * Parsed here rather than with EventSource: Node has none, and it could neither send the
 * bearer token nor keep an int64 id exact. Every id the stream carries is remembered and
 * sent back as Last-Event-ID on reconnecting, so the iteration has no gap and no repeat.
 */
import type { Client } from 'openapi-fetch';
import { errorFromResponse, PlantStoreConnectionError, PlantStoreError } from './errors.js';
import { parseJson } from './json.js';
import type { components, paths } from './openapi-types.js';

type Plant = components['schemas']['StoredPlant'];

export type EventType = 'plant.created' | 'plant.updated' | 'plant.deleted';

/** Where a change is: its event id (pass it as `after` to resume right after it) and its position in the log. */
interface ChangeAt {
  /** `<history>-<position>`: what `after` takes. */
  readonly id: string;
  readonly position: bigint;
}

/** One change, at its place in the store's change log. */
export type PlantChangeEvent =
  | (ChangeAt & { readonly type: 'plant.created'; readonly plant: Plant })
  /** previousTag: on a change of the plant's tag, the tag it had (null for none). */
  | (ChangeAt & { readonly type: 'plant.updated'; readonly plant: Plant; readonly previousTag?: string | null })
  | (ChangeAt & { readonly type: 'plant.deleted'; readonly plant: { readonly id: bigint } });

export interface Reconnection {
  /** Why: the service ended the stream (and its reason), or the error that broke or refused the connection. */
  readonly reason: string;
  readonly delayMs: number;
}

export interface WatchOptions {
  /** Start right after this event (a change's `id`; `0`: the oldest change kept); without it, from now on. */
  readonly after?: string;
  /** Only these types (all when left out or empty). */
  readonly types?: readonly EventType[];
  /**
   * Only changes of plants with this tag, or that had it (a change that took the plant out of
   * it has `previousTag`; a deletion, the tag it had).
   */
  readonly tag?: string;
  /** Ends the iteration: the loop finishes normally and the connection is closed. */
  readonly signal?: AbortSignal;
  /** The wait before reconnecting, instead of the service's advice (`retry:`, 2 s). Failed connections wait longer each
   * time, up to 30 s. */
  readonly reconnectDelayMs?: number;
  /** Told before each wait to reconnect (the CLI shows it). */
  readonly onReconnect?: (reconnection: Reconnection) => void;
}

export interface EventOperations {
  /** Every change, as it happens, until `signal` aborts or the loop stops; reconnects and resumes by itself. */
  watchChanges(options?: WatchOptions): AsyncIterable<PlantChangeEvent>;
}

/** Until the service's first `retry:` advice arrives: the same as it advises. */
const DEFAULT_RETRY_MS = 2000;
const MAX_RETRY_MS = 30_000;
/** Four missed heartbeats (15 s apart by default): a half-open TCP connection never errors. */
const SILENCE_LIMIT_MS = 60_000;
const INT64_MAX = 2n ** 63n - 1n;
/** An event id: `<history>-<position>`; a bare `0` is the start of any history. */
const EVENT_ID = /^(?:[0-9a-f]{16}-)?(0|[1-9][0-9]{0,18})$/;
const CHANGE_TYPES: ReadonlySet<string> = new Set<EventType>(['plant.created', 'plant.updated', 'plant.deleted']);

// ---- the stream format --------------------------------------------------------

interface SseMessage {
  id?: string;
  event?: string;
  data?: string;
  retry?: number;
}

function addField(message: SseMessage, line: string): void {
  const colon = line.indexOf(':');
  const name = colon === -1 ? line : line.slice(0, colon);
  const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
  if (name === 'event') message.event = value;
  else if (name === 'data') message.data = message.data === undefined ? value : `${message.data}\n${value}`;
  else if (name === 'id' && !value.includes('\0')) message.id = value;
  else if (name === 'retry' && /^[0-9]+$/.test(value)) message.retry = Number(value);
}

/** A message the end cuts off is dropped, as the standard says. */
async function* sseMessages(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  let pending = '';
  let message: SseMessage = {};
  for await (const chunk of chunks) {
    // Lines end with LF, CRLF or CR; a CR at the very end may be half of a CRLF, so it waits for the next chunk.
    const lines = (pending + decoder.decode(chunk, { stream: true })).split(/\r\n|\r(?!$)|\n/);
    pending = lines.pop() ?? '';
    for (const line of lines) {
      if (line === '') {
        if (Object.keys(message).length > 0) yield message;
        message = {};
      } else if (!line.startsWith(':')) addField(message, line);
    }
  }
}

/** The event id, and the position in it, if `text` is one. */
function idOf(text: string): { id: string; position: bigint } | undefined {
  const match = EVENT_ID.exec(text);
  const position = match === null ? undefined : BigInt(match[1] ?? '');
  return position !== undefined && position <= INT64_MAX ? { id: text, position } : undefined;
}

/** The change a message carries, if it is one. */
function changeOf(message: SseMessage): PlantChangeEvent | undefined {
  if (message.event === undefined || !CHANGE_TYPES.has(message.event)) return undefined;
  const at = idOf(message.id ?? '');
  // Without its id a change could be neither resumed after nor told apart from a repeat.
  if (at === undefined || message.data === undefined) {
    throw new Error(`the service sent a ${message.event} event without a valid id or data`);
  }
  // The service sends its documented payloads (the plant; {"id"} for a deletion): trusted, as its responses are.
  const { previousTag, ...plant } = parseJson(message.data) as { previousTag?: string | null };
  const previous = previousTag === undefined ? {} : { previousTag };
  return { ...at, type: message.event, plant, ...previous } as PlantChangeEvent;
}

const CLOSING_EVENTS = new Set(['stream.overflow', 'stream.shutdown', 'stream.unauthorized']);

/** The service ending the stream, saying why and where to resume. */
function closingOf(message: SseMessage): { reason: string; lastEventId: string | undefined } | undefined {
  if (message.event === undefined || !CLOSING_EVENTS.has(message.event)) return undefined;
  const body = parseJson(message.data ?? '{}') as { reason?: unknown; lastEventId?: unknown };
  const reason = typeof body.reason === 'string' ? body.reason : message.event;
  const lastEventId = typeof body.lastEventId === 'string' ? idOf(body.lastEventId)?.id : undefined;
  return { reason: `${message.event}: ${reason}`, lastEventId };
}

// ---- waiting ------------------------------------------------------------------

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** A failure another attempt may not meet: the service busy or down, or not reached. */
function retryable(error: unknown): boolean {
  if (error instanceof PlantStoreConnectionError) return true;
  return error instanceof PlantStoreError && (error.status === 408 || error.status === 429 || error.status >= 500);
}

/** Jittered, so the clients a restart cut off do not all come back at once. */
function backoff(baseMs: number, failures: number, error: unknown): number {
  const doubled = Math.min(MAX_RETRY_MS, baseMs * 2 ** (failures - 1));
  const asked =
    error instanceof PlantStoreError && error.retryAfterSeconds !== undefined ? error.retryAfterSeconds * 1000 : 0;
  return Math.round(Math.min(MAX_RETRY_MS, Math.max(doubled * (0.75 + Math.random() / 4), asked)));
}

function describe(error: unknown): string {
  if (error instanceof PlantStoreError)
    return `${error.message} (HTTP ${error.status}${error.error === 0 ? '' : `, error ${error.error}`})`;
  return error instanceof Error ? error.message : String(error);
}

function startId(after: string): string {
  const at = idOf(after.trim());
  if (at === undefined) {
    throw new RangeError(
      `after must be an event id as the stream sent it (<history>-<position>, or 0); got '${after}'`,
    );
  }
  return at.id;
}

// ---- the operation ------------------------------------------------------------

export function eventOperations(api: Client<paths>, baseUrl: string, timeoutMs: number): EventOperations {
  async function open(
    query: { types?: string; tag?: string },
    lastId: string | undefined,
    signal: AbortSignal,
  ): Promise<ReadableStream<Uint8Array>> {
    // Not AbortSignal.timeout: this bounds the wait for the answer, and must not cut off the stream after it.
    const timer = new AbortController();
    const timeout = setTimeout(
      () => timer.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError')),
      timeoutMs,
    );
    try {
      const outcome = await api.GET('/events', {
        params: { query, header: lastId === undefined ? {} : { 'last-event-id': lastId } },
        headers: { accept: 'text/event-stream' },
        parseAs: 'stream',
        signal: AbortSignal.any([timer.signal, signal]),
      });
      if (!outcome.response.ok) throw errorFromResponse(outcome.response, outcome.error);
      if (outcome.data === undefined || outcome.data === null)
        throw new PlantStoreConnectionError(baseUrl, new Error('the stream had no body'));
      return outcome.data;
    } catch (error) {
      throw error instanceof PlantStoreError || error instanceof PlantStoreConnectionError || signal.aborted
        ? error
        : new PlantStoreConnectionError(baseUrl, error);
    } finally {
      clearTimeout(timeout);
    }
  }

  async function* chunksOf(
    body: ReadableStream<Uint8Array>,
    connection: AbortController,
    stop: AbortSignal,
  ): AsyncGenerator<Uint8Array> {
    const silent = () => connection.abort(new Error(`nothing received for ${SILENCE_LIMIT_MS / 1000} s`));
    let watchdog = setTimeout(silent, SILENCE_LIMIT_MS);
    try {
      for await (const chunk of body) {
        // Not ticking while the consumer handles what was read: its pace is not the service's silence.
        clearTimeout(watchdog);
        yield chunk;
        watchdog = setTimeout(silent, SILENCE_LIMIT_MS);
      }
    } catch (error) {
      throw stop.aborted
        ? error
        : new PlantStoreConnectionError(baseUrl, connection.signal.aborted ? connection.signal.reason : error);
    } finally {
      clearTimeout(watchdog);
    }
  }

  async function* changes(options: WatchOptions, after: string | undefined): AsyncGenerator<PlantChangeEvent> {
    const query = {
      ...(options.types === undefined || options.types.length === 0 ? {} : { types: options.types.join(',') }),
      ...(options.tag === undefined ? {} : { tag: options.tag }),
    };
    let lastId = after;
    let advisedMs = DEFAULT_RETRY_MS;
    let failures = 0;
    // Also aborted when the loop stops early (this generator's finally).
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted === true) stop.abort();
    try {
      while (!stop.signal.aborted) {
        const connection = new AbortController();
        let reason = 'the service ended the stream';
        let backoffMs: number | undefined;
        let opened = false;
        try {
          const body = await open(query, lastId, AbortSignal.any([stop.signal, connection.signal]));
          opened = true;
          failures = 0;
          for await (const message of sseMessages(chunksOf(body, connection, stop.signal))) {
            if (message.retry !== undefined) advisedMs = message.retry;
            const change = changeOf(message);
            const closing = closingOf(message);
            // Id-only messages count too: they move past changes a filter skipped. A closing message's
            // lastEventId is never behind what the stream sent: the server names the last id it told.
            lastId = idOf(message.id ?? '')?.id ?? lastId;
            if (closing?.lastEventId !== undefined) lastId = closing.lastEventId;
            if (closing !== undefined) reason = closing.reason;
            if (change !== undefined) yield change;
          }
        } catch (error) {
          if (stop.signal.aborted) return;
          if (!retryable(error)) throw error;
          reason = describe(error);
          // A stream that was open and broke waits the usual delay; failing to connect waits longer each time.
          if (!opened) backoffMs = backoff(options.reconnectDelayMs ?? advisedMs, ++failures, error);
        } finally {
          connection.abort();
        }
        if (stop.signal.aborted) return;
        const delayMs = backoffMs ?? options.reconnectDelayMs ?? advisedMs;
        options.onReconnect?.({ reason, delayMs });
        await sleep(delayMs, stop.signal);
      }
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
      stop.abort();
    }
  }

  return {
    watchChanges(options = {}) {
      // Checked now, so a bad id throws here rather than at the first step of the loop.
      return changes(options, options.after === undefined ? undefined : startId(options.after));
    },
  };
}
