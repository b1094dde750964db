/**
 * One message of GET /events as a schema, the way OpenAPI 3.2's `itemSchema` describes a `text/event-stream` body:
 * the fields of one Server-Sent Events message (`id`, `event`, `data`, `retry`) as an object, `data` a JSON text
 * whose schema is its `contentSchema`, one alternative per kind of message. The 3.1 document shows it beside the
 * media type as `x-itemSchema`, as it does for an import's lines.
 */
import {
  EVENT_TYPES,
  PLANT_CREATED,
  PLANT_DELETED,
  PLANT_UPDATED,
  WEBHOOK_DISABLED,
  type EventType,
} from '../domain/events.js';
import { CLOSING_REASONS, type ClosingReason } from './sse.js';

/** An id as the stream sends it: always with its history. */
const StreamEventId = {
  type: 'string',
  pattern: '^[0-9a-f]{16}-(0|[1-9][0-9]{0,18})$',
  description: 'The event id, `<history>-<position>`: send it back as `Last-Event-ID` (or `after`) to resume after it.',
} as const;

const previousTag = {
  type: ['string', 'null'],
  description:
    'On a change of the tag only: the tag the plant had (null: none). Its absence means the tag did not change.',
} as const;

/** The JSON each event type carries in `data`: the body webhooks carry, and `previousTag` on an update of the tag. */
const EVENT_DATA = {
  [PLANT_CREATED]: { $ref: '#/components/schemas/NewPlant' },
  [PLANT_UPDATED]: { allOf: [{ $ref: '#/components/schemas/NewPlant' }], properties: { previousTag } },
  [PLANT_DELETED]: { $ref: '#/components/schemas/DeletedPlant' },
  [WEBHOOK_DISABLED]: { $ref: '#/components/schemas/WebhookDisabledEvent' },
} as const satisfies Record<EventType, object>;

const CLOSING_WHY = {
  overflow: 'the client took nothing for EVENTS_STALL_MS while changes waited for it',
  shutdown: 'the server is shutting down',
  unauthorized: "the stream's token was revoked or expired",
} as const satisfies Record<ClosingReason, string>;

function jsonData(schema: object, description: string) {
  return { type: 'string', contentMediaType: 'application/json', contentSchema: schema, description } as const;
}

const change = (type: EventType) => ({
  title: type,
  description: `A \`${type}\` event: its \`data\` is the JSON the \`${type}\` webhook carries.`,
  required: ['id', 'event', 'data'],
  properties: {
    event: { const: type },
    data: jsonData(EVENT_DATA[type], `The ${type} event's JSON (int64 ids exact).`),
  },
});

const closing = (reason: ClosingReason) => ({
  title: `stream.${reason}`,
  description: `The last message of a stream the server ends because ${CLOSING_WHY[reason]}; it has no \`id\`.`,
  required: ['event', 'data'],
  not: { required: ['id'] },
  properties: {
    event: { const: `stream.${reason}` },
    data: jsonData(
      {
        type: 'object',
        required: ['reason', 'lastEventId'],
        properties: {
          reason: { type: 'string', description: 'Why the stream ended, in words.' },
          lastEventId: { ...StreamEventId, description: 'Where to resume: reconnect with it as `Last-Event-ID`.' },
        },
      },
      'Why, and where to resume.',
    ),
  },
});

export const StreamMessage = {
  type: 'object',
  description:
    'One message of the stream (comment lines such as `: heartbeat` are not messages). A change carries `id`, `event` ' +
    'and `data`; an `id` alone moves the resume point past changes a filter left out; `retry` alone advises the ' +
    'reconnect delay; a `stream.*` event ends the stream.',
  properties: {
    id: StreamEventId,
    event: { type: 'string', description: 'The event type; EventSource dispatches it under this name.' },
    data: { type: 'string', description: 'One line of JSON.' },
    retry: { type: 'integer', minimum: 0, description: 'The reconnect delay EventSource should use, in milliseconds.' },
  },
  oneOf: [
    ...EVENT_TYPES.map(change),
    ...CLOSING_REASONS.map(closing),
    {
      title: 'position',
      description: 'An id alone: no event fires, but the client resumes after it.',
      required: ['id'],
      not: { anyOf: [{ required: ['event'] }, { required: ['data'] }] },
    },
    {
      title: 'retry',
      description: 'The reconnect delay alone, sent first.',
      required: ['retry'],
      not: { anyOf: [{ required: ['id'] }, { required: ['event'] }, { required: ['data'] }] },
    },
  ],
} as const;
