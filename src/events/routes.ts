/**
 * GET /events: the live change stream (Server-Sent Events). A stream starts now,
 * or resumes right after a position (Last-Event-ID, as EventSource sends it on
 * reconnect, or ?after=); a position older than the change log keeps is refused
 * before the stream starts (410), never answered with a silent gap.
 */
import { finished, Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { EVENT_TYPES, isEventType, type EventType } from '../domain/events.js';
import { failure } from '../http/errors.js';
import { parseInt64Text } from '../http/int64.js';
import { streamedText, type TypedRoutes } from '../http/type-provider.js';
import { PlantTag } from '../plants/schemas.js';
import type { ChangeLog } from '../store/types.js';
import { bearerAuth, bearerSecret } from '../tokens/auth.js';
import type { ChangeHub } from './change-hub.js';
import { ChangeStream, type StreamFilter } from './change-stream.js';
import type { OpenStreams } from './open-streams.js';
import { closingMessage, comment, positionMessage, retryAdvice, SHUTDOWN_DETAIL, SSE_MEDIA_TYPE } from './sse.js';

/** How long EventSource should wait before reconnecting. */
export const RETRY_MS = 2000;

export interface EventRoutesOptions {
  readonly hub: () => Promise<ChangeHub>;
  /** True once the app is closing: a stream is then ended as soon as it starts, with stream.shutdown. */
  readonly closing: () => boolean;
  readonly open: OpenStreams;
  readonly heartbeatMs: number;
  readonly retentionHours: number;
  readonly maxBacklogBytes: number;
}

const EventsQuery = {
  type: 'object',
  properties: {
    after: {
      type: 'string', pattern: '^(0|[1-9][0-9]{0,18})$',
      description: 'Resume right after this position (an event\'s `id`). `Last-Event-ID` wins when both are sent. Without either, the stream starts now.',
    },
    types: {
      type: 'string', pattern: `^(${EVENT_TYPES.join('|').replaceAll('.', '\\.')})(,(${EVENT_TYPES.join('|').replaceAll('.', '\\.')}))*$`,
      description: `Only these event types, comma-separated: ${EVENT_TYPES.join(', ')} (all by default).`,
    },
    tag: { ...PlantTag, description: 'Only changes of plants with this tag (for a deletion, the tag the plant had).' },
  },
} as const;

const EventsHeaders = {
  type: 'object',
  properties: {
    'last-event-id': { type: 'string', maxLength: 32, description: 'The `id` of the last event received: the stream resumes right after it (EventSource sends it when it reconnects).' },
  },
} as const;

function positionOf(text: string, name: string): bigint {
  const position = parseInt64Text(text.trim());
  if (position === undefined || position < 0n) throw failure('INVALID_PARAMETER', [`${name} must be an event id (a position, 0 or more); got '${text.slice(0, 40)}'`]);
  return position;
}

/** The headers of an answer that is an event stream: set just before it is sent, so an Error record thrown earlier keeps its own. */
function markEventStream(reply: FastifyReply): void {
  void reply
    .header('content-type', `${SSE_MEDIA_TYPE}; charset=utf-8`)
    .header('cache-control', 'no-cache, no-transform')
    // nginx would otherwise hold the stream in its buffer.
    .header('x-accel-buffering', 'no');
}

/** Where the stream starts (`now` without resumeAfter); refuses a position the log no longer covers, or one it never reached. */
async function startOf(log: ChangeLog, now: () => bigint | Promise<bigint>, resumeAfter: bigint | undefined, retentionHours: number): Promise<bigint> {
  if (resumeAfter === undefined) return now();
  const { last, oldest } = await log.bounds();
  if (resumeAfter > last) throw failure('INVALID_PARAMETER', [`Last-Event-ID/after ${resumeAfter} is past the last change (${last}): not a position of this store`]);
  if (resumeAfter < last && (oldest === undefined || oldest > resumeAfter + 1n)) {
    throw failure('EVENTS_EXPIRED', [
      `the changes after ${resumeAfter} are no longer kept (the change log keeps ${retentionHours} h; its oldest is ${oldest ?? 'none'}): ` +
        'read the plants afresh, then stream from now, without Last-Event-ID',
    ]);
  }
  return resumeAfter;
}

export function eventRoutes(options: EventRoutesOptions): TypedRoutes {
  return async (app) => {
    app.get('/events', {
      schema: {
        operationId: 'streamEvents',
        summary: 'Stream every change (Server-Sent Events)',
        description:
          'A live stream of every change of a plant, in order, as Server-Sent Events (`text/event-stream`): each message has `id:` (its position ' +
          'in the store\'s change log), `event:` (`plant.created`, `plant.updated` or `plant.deleted`) and `data:` (the JSON webhooks carry: ' +
          'the plant, or for a deletion `{"id"}`; int64 ids exact). Changes made on any instance reach every stream within about a second.\n\n' +
          '**Resuming.** Send the last `id` received as `Last-Event-ID` (EventSource does so when it reconnects) or as `?after=`: the stream ' +
          'continues right after it, with no gap and no repeat. A position older than the change log keeps (`EVENTS_RETENTION_HOURS`) ' +
          'gets 410 `EVENTS_EXPIRED` before the stream starts. Without either, the stream starts now.\n\n' +
          `**Keeping it open.** A comment line (\`: heartbeat\`) comes every \`EVENTS_HEARTBEAT_MS\` (15 s by default), with an id-only message ` +
          `when a filter skipped changes, so a resume does not re-read them; \`retry: ${RETRY_MS}\` advises the reconnect delay. A client ` +
          'that reads too slowly (more than `EVENTS_MAX_BACKLOG_BYTES` waiting) gets a `stream.overflow` event naming `lastEventId` and the ' +
          'stream ends; a server that shuts down ends streams with `stream.shutdown`. Reconnect and resume from `lastEventId` either way. ' +
          'A stream whose token is revoked or expires while it runs ends with `stream.unauthorized` within about ' +
          '`TOKEN_CACHE_TTL_MS` and a second. One token may hold `EVENTS_MAX_STREAMS_PER_TOKEN` streams (429 beyond).',
        tags: ['events'],
        security: bearerAuth('plants:read'),
        querystring: EventsQuery,
        headers: EventsHeaders,
        response: {
          200: streamedText('The stream of changes.', {
            [SSE_MEDIA_TYPE]: { schema: { type: 'string', description: 'id:, event:, data: messages; comment heartbeats.' } },
          }),
        },
      },
      config: { failures: ['EVENTS_EXPIRED', 'TOO_MANY_STREAMS', 'STORE_UNAVAILABLE'] },
    }, async (request, reply) => {
      const { after, types, tag } = request.query;
      const header = request.headers['last-event-id'];
      const resumeAfter = header !== undefined && header !== '' ? positionOf(header, 'Last-Event-ID') : after === undefined ? undefined : positionOf(after, 'after');
      if (options.closing()) {
        // Shutting down: no hub is started now, and the stream ends at once, saying where to resume.
        const start = await startOf(app.store.changes, async () => (await app.store.changes.bounds()).last, resumeAfter, options.retentionHours);
        markEventStream(reply);
        return reply.send(retryAdvice(RETRY_MS) + positionMessage(start) + closingMessage('shutdown', start, SHUTDOWN_DETAIL));
      }
      const release = options.open.reserve(request.token?.id ?? '', (held) => failure('TOO_MANY_STREAMS', [held]));
      let hub: ChangeHub;
      let start: bigint;
      try {
        hub = await options.hub();
        start = await startOf(app.store.changes, () => hub.position, resumeAfter, options.retentionHours);
      } catch (error) {
        release();
        throw error;
      }
      const filter: StreamFilter = {
        ...(types === undefined ? {} : { types: new Set(types.split(',').filter(isEventType) as EventType[]) }),
        ...(tag === undefined ? {} : { tag }),
      };

      // The stream pushes what it has when it has it (read() asks for nothing); what the socket has not
      // taken waits in `out` and in the response, and counts as the reader's backlog.
      const out = new Readable({ read() {} });
      const raw = reply.raw;
      const stream = new ChangeStream(out, () => out.readableLength + raw.writableLength, filter, start, options.maxBacklogBytes, () => {
        hub.remove(stream);
        options.open.remove(stream);
      });
      options.open.attach(stream, { secret: bearerSecret(request) ?? '', release });
      // The stream ends with the connection, also when the client went away while it was being set up:
      // finished() reports a response already closed too, where a 'close' listener added now never fires.
      finished(raw, () => stream.end());
      // The start as an id-only message: a client that loses the connection before the first change
      // still resumes from here (EventSource sends it back as Last-Event-ID), not from a later "now".
      out.push(retryAdvice(RETRY_MS) + positionMessage(start) + comment(`streaming changes after ${start}`));
      // Closing began while the stream was being set up, after the open streams were ended: end this one too.
      if (options.closing()) stream.close('shutdown', SHUTDOWN_DETAIL);
      else {
        hub.add(stream);
        stream.catchUp(app.store.changes, hub.position).catch((error: unknown) => {
          request.log.warn({ err: error }, 'change stream: catching up failed; the stream ends and the client resumes');
          stream.end();
        });
      }
      markEventStream(reply);
      return reply.send(out);
    });
  };
}
