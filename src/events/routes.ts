/**
 * GET /events. A resume point older than the change log keeps is refused before the stream
 * starts (410), never answered with a silent gap.
 */
import { finished } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { EVENT_TYPES, isEventType, PLANT_EVENT_TYPES, WEBHOOK_DISABLED, type EventType } from '../domain/events.js';
import { EVENT_ID } from '../domain/text-rules.js';
import { failure } from '../http/errors.js';
import { parseInt64Text } from '../http/int64.js';
import { streamedText, type TypedRoutes } from '../http/type-provider.js';
import { PlantTag } from '../plants/schemas.js';
import type { ChangeLog } from '../store/types.js';
import { bearerAuth, bearerSecret } from '../tokens/auth.js';
import type { ChangeHub } from './change-hub.js';
import { ChangeStream, type StreamFilter } from './change-stream.js';
import type { OpenStreams } from './open-streams.js';
import type { PrimaryPeer } from '../plugins/app/cluster.js';
import type { EventTickets, Redemption } from './tickets.js';
import { closingMessage, comment, positionMessage, retryAdvice, SHUTDOWN_DETAIL, SSE_MEDIA_TYPE } from './sse.js';
import { StreamMessage } from './stream-messages.js';

/** How long EventSource should wait before reconnecting. */
export const RETRY_MS = 2000;

export interface EventRoutesOptions {
  readonly hub: () => Promise<ChangeHub>;
  /** True once the app is closing: a stream is then ended as soon as it starts, with stream.shutdown. */
  readonly closing: () => boolean;
  readonly open: OpenStreams;
  readonly tickets: EventTickets;
  /** In a multi-worker instance, the primary holds the tickets: a ticket is redeemed there before the auth hook. */
  readonly primary?: PrimaryPeer;
  readonly heartbeatMs: number;
  readonly retentionHours: number;
  readonly maxBacklogBytes: number;
  readonly stallMs: number;
}

const EventsQuery = {
  type: 'object',
  properties: {
    after: {
      type: 'string',
      pattern: EVENT_ID,
      description:
        'Resume right after this event (its `id`, `<history>-<position>`). `Last-Event-ID` wins when both are sent. Without either, the stream ' +
        'starts now. `0` alone: from the oldest change the log keeps. A position above 9223372036854775807 is a 400 INVALID_PARAMETER.',
    },
    types: {
      type: 'string',
      pattern: `^(${EVENT_TYPES.join('|').replaceAll('.', '\\.')})(,(${EVENT_TYPES.join('|').replaceAll('.', '\\.')}))*$`,
      description:
        `Only these event types, comma-separated: ${EVENT_TYPES.join(', ')}. By default every plant event ` +
        `(${PLANT_EVENT_TYPES.join(', ')}); the operational event ${WEBHOOK_DISABLED} only when named here.`,
    },
    ticket: {
      type: 'string',
      maxLength: 100,
      description:
        'A ticket from `POST /events/tickets`, in place of the `Authorization` header (for EventSource, which cannot send one): it opens ' +
        'one stream, soon after it was issued, on the instance that issued it.',
    },
    tag: {
      ...PlantTag,
      description:
        'Only changes of plants with this tag, or that had it: a change that takes a plant out of the tag passes too (its data has `previousTag`); ' +
        'for a deletion, the tag the plant had.',
    },
  },
} as const;

const EventsHeaders = {
  type: 'object',
  properties: {
    'last-event-id': {
      type: 'string',
      pattern: EVENT_ID,
      description:
        'The `id` of the last event received (`<history>-<position>`): the stream resumes right after it (EventSource sends it when it reconnects). ' +
        'The same rules as `after`: anything else, or a position above 9223372036854775807, is a 400 INVALID_PARAMETER.',
    },
  },
} as const;

/** Where a client asks to resume: after `position` of `history` (undefined for a bare position). */
interface ResumePoint {
  /** Last-Event-ID or after: where it came from, for messages. */
  readonly name: string;
  readonly text: string;
  readonly history: string | undefined;
  readonly position: bigint;
}

function resumePointOf(raw: string, name: string): ResumePoint {
  const text = raw.trim();
  const match = new RegExp(EVENT_ID).exec(text);
  const position = match === null ? undefined : parseInt64Text(match[2] ?? '');
  if (match === null || position === undefined) {
    const problem = `${name} must be an event id as the stream sent it (<history>-<position>); got '${text.slice(0, 40)}'`;
    throw failure('INVALID_PARAMETER', [problem]);
  }
  return { name, text, history: match[1]?.slice(0, -1), position };
}

/** The headers of an answer that is an event stream: set just before it is sent, so an Error record thrown earlier
 * keeps its own. */
function markEventStream(reply: FastifyReply): void {
  void reply
    .header('content-type', `${SSE_MEDIA_TYPE}; charset=utf-8`)
    .header('cache-control', 'no-cache, no-transform')
    // nginx would otherwise hold the stream in its buffer.
    .header('x-accel-buffering', 'no');
}

/**
 * A bare `0` is the same in every history; another bare position cannot be told from one of
 * an earlier history, so it is refused like one.
 */
async function startOf(
  log: ChangeLog,
  now: () => { position: bigint; history: string } | Promise<{ position: bigint; history: string }>,
  resume: ResumePoint | undefined,
  retentionHours: number,
): Promise<{ position: bigint; history: string }> {
  if (resume === undefined) return now();
  const { history, last, oldest } = await log.bounds();
  const resumeAfter = resume.position;
  const other = resume.history === undefined ? resumeAfter !== 0n : resume.history !== history;
  if (other) {
    const why =
      resume.history === undefined
        ? 'is a bare position, without the history it belongs to (ids are <history>-<position>): it cannot be told from ' +
          'a position of a history this store no longer has'
        : `belongs to another history of this store (now ${history}): the store was restored from a backup or replaced ` +
          'by a copy since, and its positions are handed out again';
    throw failure('EVENTS_HISTORY_CHANGED', [
      `${resume.name} ${resume.text} ${why}. Read the plants afresh, then stream from now, without Last-Event-ID`,
    ]);
  }
  if (resumeAfter > last) {
    throw failure('INVALID_PARAMETER', [
      `${resume.name} ${resume.text} is past the last change (${last}): not a position of this store`,
    ]);
  }
  if (resumeAfter < last && (oldest === undefined || oldest > resumeAfter + 1n)) {
    throw failure('EVENTS_EXPIRED', [
      `the changes after ${resumeAfter} are no longer kept (the change log keeps ${retentionHours} h; its oldest is ${oldest ?? 'none'}): ` +
        'read the plants afresh, then stream from now, without Last-Event-ID',
    ]);
  }
  return { position: resumeAfter, history };
}

export function eventRoutes(options: EventRoutesOptions): TypedRoutes {
  /** The secret each request that came with a ticket was authenticated with. */
  const ticketSecrets = new WeakMap<FastifyRequest, string>();
  const redeemedAhead = new WeakMap<FastifyRequest, Redemption>();
  return async (app) => {
    const { primary } = options;
    // A hook of this context runs before the route's own (the auth hook, which must decide synchronously).
    if (primary !== undefined)
      app.addHook('onRequest', async (request) => {
        const query: unknown = request.query;
        const ticket = typeof query === 'object' && query !== null ? Reflect.get(query, 'ticket') : undefined;
        if (typeof ticket === 'string') redeemedAhead.set(request, await primary.ask('ticket-redeem', ticket));
      });
    app.get(
      '/events',
      {
        schema: {
          operationId: 'streamEvents',
          summary: 'Stream every change (Server-Sent Events)',
          description:
            'A live stream of every change of a plant, in order, as Server-Sent Events (`text/event-stream`): each message has `id:` (its position ' +
            "in the store's change log), `event:` (`plant.created`, `plant.updated` or `plant.deleted`) and `data:` (the JSON webhooks carry: " +
            'the plant, or for a deletion `{"id"}`; int64 ids exact). Changes made on any instance reach every stream within about a second.\n\n' +
            '**Resuming.** Send the last `id` received as `Last-Event-ID` (EventSource does so when it reconnects) or as `?after=`: the stream ' +
            'continues right after it, with no gap and no repeat. A position older than the change log keeps (`EVENTS_RETENTION_HOURS`) ' +
            'gets 410 `EVENTS_EXPIRED` before the stream starts. An id is `<history>-<position>`: a store restored from a backup or replaced by ' +
            'a copy starts a new history, and an id of another one (or a bare position, except `0`) gets 410 `EVENTS_HISTORY_CHANGED`. ' +
            'Without either, the stream starts now.\n\n' +
            '**Tag filter.** With `tag`, a change that takes a plant out of the tag passes too: a change of the tag adds `previousTag` to ' +
            "its data (the tag the plant had, `null` for none), so a reader keeping a tag's set sees plants leave it.\n\n" +
            '**Operational events.** A stream whose `types` names `webhook.disabled` also gets one such event each time a webhook ' +
            "subscription is disabled automatically (its data: the subscription's `id`, `url`, `disabledAt` and `disabledReason`), " +
            'in the same order as the changes; `tag` does not filter it out. Without `types`, a stream gets plant changes only.\n\n' +
            `**Keeping it open.** A comment line (\`: heartbeat\`) comes every \`EVENTS_HEARTBEAT_MS\` (15 s by default), with an id-only message ` +
            `when a filter skipped changes, so a resume does not re-read them; \`retry: ${RETRY_MS}\` advises the reconnect delay. A client ` +
            'far behind (a resume, a large import) gets every change on the one connection, at its own pace: the stream reads the log as the ' +
            'client takes what it was sent, holding at most about `EVENTS_MAX_BACKLOG_BYTES` for it. A client that takes nothing for ' +
            '`EVENTS_STALL_MS` (30 s by default) while changes wait for it gets a `stream.overflow` event naming `lastEventId` and the ' +
            'stream ends; a server that shuts down ends streams with `stream.shutdown`. Reconnect and resume from `lastEventId` either way. ' +
            'A stream whose token is revoked or expires while it runs ends with `stream.unauthorized` within about ' +
            '`TOKEN_CACHE_TTL_MS` and a second. One token may hold `EVENTS_MAX_STREAMS_PER_TOKEN` streams (429 beyond).',
          tags: ['events'],
          security: [...bearerAuth('plants:read'), { eventTicket: [] }],
          querystring: EventsQuery,
          headers: EventsHeaders,
          response: {
            200: streamedText('The stream of changes.', {
              [SSE_MEDIA_TYPE]: {
                schema: {
                  type: 'string',
                  description:
                    'Server-Sent Events: messages of `id:`, `event:`, `data:` and `retry:` lines, each ended by a blank line, ' +
                    'and `: heartbeat` comment lines. `x-itemSchema` (OpenAPI 3.2 `itemSchema`) describes one message.',
                },
              },
            }),
          },
        },
        config: {
          responseItemSchemas: { [SSE_MEDIA_TYPE]: StreamMessage },
          failures: [
            'EVENTS_EXPIRED',
            'EVENTS_HISTORY_CHANGED',
            'EVENTS_TICKET_INVALID',
            'TOO_MANY_STREAMS',
            'STORE_UNAVAILABLE',
          ],
          // The stream is then held by the ticket's token, and re-checked with its secret like any other.
          redeemTicket: (ticket, request) => {
            const redeemed = redeemedAhead.get(request) ?? options.tickets.redeem(ticket);
            if ('secret' in redeemed) ticketSecrets.set(request, redeemed.secret);
            return redeemed;
          },
        },
      },
      async (request, reply) => {
        const { after, types, tag } = request.query;
        const header = request.headers['last-event-id'];
        const resume =
          header !== undefined && header !== ''
            ? resumePointOf(header, 'Last-Event-ID')
            : after === undefined
              ? undefined
              : resumePointOf(after, 'after');
        if (options.closing()) {
          // Shutting down: no hub is started now, and the stream ends at once, saying where to resume.
          const now = async () => {
            const bounds = await app.store.changes.bounds();
            return { position: bounds.last, history: bounds.history };
          };
          const { position, history } = await startOf(app.store.changes, now, resume, options.retentionHours);
          markEventStream(reply);
          const closing = closingMessage('shutdown', history, position, SHUTDOWN_DETAIL);
          return reply.send(retryAdvice(RETRY_MS) + positionMessage(history, position) + closing);
        }
        const release = options.open.reserve(request.token?.id ?? '', (held) => failure('TOO_MANY_STREAMS', [held]));
        let hub: ChangeHub;
        let start: bigint;
        try {
          hub = await options.hub();
          const now = () => ({ position: hub.position, history: hub.history });
          const begin = await startOf(app.store.changes, now, resume, options.retentionHours);
          hub.noteHistory(begin.history);
          start = begin.position;
        } catch (error) {
          release();
          throw error;
        }
        const filter: StreamFilter = {
          ...(types === undefined ? {} : { types: new Set(types.split(',').filter(isEventType) as EventType[]) }),
          ...(tag === undefined ? {} : { tag }),
        };

        // What the socket has not taken waits in the stream's body and in the response, and counts as the
        // reader's backlog; the response's 'drain' tells the stream the reader took it.
        const raw = reply.raw;
        const source = { log: app.store.changes, livePosition: () => hub.position, history: hub.history };
        const limits = { maxBacklogBytes: options.maxBacklogBytes, stallMs: options.stallMs };
        const stream = new ChangeStream(
          source,
          () => raw.writableLength,
          filter,
          start,
          limits,
          () => {
            hub.remove(stream);
            options.open.remove(stream);
          },
        );
        raw.on('drain', () => stream.taken());
        const out = stream.body;
        options.open.attach(stream, {
          secret: bearerSecret(request) ?? ticketSecrets.get(request) ?? '',
          release,
        });
        // The stream ends with the connection, also when the client went away while it was being set up:
        // finished() reports a response already closed too, where a 'close' listener added now never fires.
        finished(raw, () => stream.end());
        // The start as an id-only message: a client that loses the connection before the first change
        // still resumes from here (EventSource sends it back as Last-Event-ID), not from a later "now".
        out.push(
          `${retryAdvice(RETRY_MS)}${positionMessage(hub.history, start)}${comment(`streaming changes after ${start}`)}`,
        );
        // Closing began while the stream was being set up, after the open streams were ended: end this one too.
        if (options.closing()) stream.close('shutdown', SHUTDOWN_DETAIL);
        else {
          hub.add(stream);
          stream.start().catch((error: unknown) => {
            request.log.warn(
              { err: error },
              'change stream: catching up failed; the stream ends and the client resumes',
            );
            stream.end();
          });
        }
        markEventStream(reply);
        return reply.send(out);
      },
    );
  };
}
