/**
 * The webhook parts of the OpenAPI document: the tag, and the event itself under the
 * top-level `webhooks` (OpenAPI 3.1): what a subscriber receives and what it must answer.
 */
import { CONTENT_FIELDS_OR, examplePlant, OPTIONAL_FIELDS_OR } from '../domain/plant-words.js';
import { EVENT_TYPE_HEADER } from './signing.js';
import {
  isPlantEventType,
  PLANT_CREATED,
  PLANT_DELETED,
  PLANT_UPDATED,
  WEBHOOK_DISABLED,
  type EventType,
} from '../domain/events.js';

export const webhooksTag = {
  name: 'webhooks',
  description:
    'Subscriptions to events (admin scope), and their delivery log. The events themselves are under `webhooks`.',
};

export interface WebhookDocumentSettings {
  readonly timeoutMs: number;
  readonly retrySchedule: readonly number[];
}

/** 300000 -> "5m": the schedule as WEBHOOK_RETRY_SCHEDULE writes it. */
export function formatDelay(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

function header(name: string, description: string, example: string) {
  return { name, in: 'header', required: true, description, schema: { type: 'string' }, example } as const;
}

interface EventDocument {
  readonly type: EventType;
  readonly operationId: string;
  readonly summary: string;
  readonly when: string;
  readonly body: string;
  readonly schema: string;
  readonly example: Readonly<Record<string, unknown>>;
}

const EVENTS: readonly EventDocument[] = [
  {
    type: PLANT_CREATED,
    operationId: 'plantCreated',
    summary: 'A plant was created',
    when: 'once for each plant that is newly created: not for a create that failed (400, 409...) nor for an idempotent replay of one.',
    body: 'The body is the plant as a `NewPlant`.',
    schema: 'NewPlant',
    example: examplePlant(10),
  },
  {
    type: PLANT_UPDATED,
    operationId: 'plantUpdated',
    summary: 'A plant was changed',
    when:
      `once for each change of a plant (PATCH or PUT) that changed its ${CONTENT_FIELDS_OR}: not for a change that changed ` +
      'nothing, nor for one refused (404, 412...).',
    body:
      'The body is the plant as it is after the change, as a `NewPlant` (no key for an optional ' +
      `${OPTIONAL_FIELDS_OR} it does not have).`,
    schema: 'NewPlant',
    example: { id: 10, name: 'Monstera deliciosa' },
  },
  {
    type: PLANT_DELETED,
    operationId: 'plantDeleted',
    summary: 'A plant was deleted',
    when: 'once for each plant that is deleted: not for a delete of a plant that was not there, nor for one refused (412...).',
    body: 'The body is the deleted plant\'s id: `{"id": <int64>}`.',
    schema: 'DeletedPlant',
    example: { id: 10 },
  },
  {
    type: WEBHOOK_DISABLED,
    operationId: 'webhookDisabled',
    summary: 'A subscription was disabled automatically',
    when:
      'once each time a subscription is disabled automatically because its delivery attempts all failed for WEBHOOK_DISABLE_AFTER ' +
      '(not when one is disabled by hand, with PATCH `enabled: false`), to the other subscriptions only, and only to those that ' +
      'list it in `eventTypes` (never by default); a tag filter does not apply to it. It is also on `GET /events` for streams ' +
      'whose `types` names it.',
    body: 'The body is the subscription that was disabled: its `id`, `url`, `disabledAt` and `disabledReason`.',
    schema: 'WebhookDisabledEvent',
    example: {
      id: 'whk_3f1c0e9a7b2d4c5e6f708192',
      url: 'https://example.com/hooks/plants',
      disabledAt: '2026-01-06T12:00:00.000Z',
      disabledReason: 'every delivery attempt failed for 5d (WEBHOOK_DISABLE_AFTER)',
    },
  },
];

/** Each event type with its summary, when it is sent and the $id of its body's schema (GET /webhooks/event-types). */
export function eventCatalogue(): readonly { type: EventType; summary: string; description: string; schema: string }[] {
  return EVENTS.map((e) => ({
    type: e.type,
    summary: e.summary,
    description: `Sent ${e.when} ${e.body}`,
    schema: e.schema,
  }));
}

/** The body of a plant.deleted event, as the webhooks section shows it. */
export const DeletedPlant = {
  $id: 'DeletedPlant',
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'integer', format: 'int64', description: 'The id of the plant that was deleted.' } },
  description: 'The body of a plant.deleted event.',
} as const;

/** The body of a webhook.disabled event. */
export const WebhookDisabledEvent = {
  $id: 'WebhookDisabledEvent',
  type: 'object',
  required: ['id', 'url', 'disabledAt', 'disabledReason'],
  properties: {
    id: { type: 'string', description: 'The id of the subscription that was disabled (whk_...).' },
    url: { type: 'string', description: 'Its URL.' },
    disabledAt: { type: 'string', format: 'date-time', description: 'When it was disabled.' },
    disabledReason: { type: 'string', description: 'Why (which WEBHOOK_DISABLE_AFTER it exceeded).' },
  },
  description: 'The body of a webhook.disabled event: the subscription as it was disabled.',
} as const;

export function webhookEvents(settings: WebhookDocumentSettings) {
  const schedule = settings.retrySchedule.map(formatDelay).join(', ');
  const attempts = settings.retrySchedule.length + 1;
  const event = (e: EventDocument) => ({
    post: {
      operationId: e.operationId,
      summary: e.summary,
      description: [
        `Sent to every subscription (\`POST /webhooks\`) whose \`eventTypes\` include \`${e.type}\`, ${e.when}`,
        isPlantEventType(e.type)
          ? `${e.body} Its int64 id is written with every digit (parse it with a big-integer-aware JSON reader). The`
          : `${e.body} The`,
        `\`${EVENT_TYPE_HEADER}\` header names the event type, so one receiver can take several.`,
        '',
        '**Signature** ([Standard Webhooks](https://www.standardwebhooks.com/)): `webhook-signature` is',
        '`v1,` + base64(HMAC-SHA256(key, `<webhook-id>.<webhook-timestamp>.<body>`)), the key being the base64 part of',
        'the subscription secret (`whsec_...`). Verify it over the raw body, e.g. with the `standardwebhooks` library.',
        'After a secret rotation (`POST /webhooks/{id}/rotate-secret`) the header carries two signatures for a while, the',
        "new secret's first: accept the message if any one verifies (the Standard Webhooks libraries do).",
        '',
        `**Acknowledging.** Answer any 2xx within ${settings.timeoutMs / 1000} s. Anything else (another status, a`,
        `timeout, a refused connection) is retried after ${schedule} (each delay ±20% jitter): ${attempts} attempts in all,`,
        'after which the delivery is marked failed (it can be retried by hand). Redirects are not followed.',
        '',
        '**At least once.** An event can arrive more than once (e.g. if the service stops between your 2xx and',
        'recording it): `webhook-id` is the same on every attempt, so deduplicate on it. Events are not ordered.',
      ].join('\n'),
      tags: ['webhooks'],
      security: [],
      parameters: [
        header(
          'webhook-id',
          'The event id (msg_...): the same on every attempt and for every subscription; deduplicate on it.',
          'msg_2bVq3v0oZ8yKkq7m9L1c4Q',
        ),
        header(
          'webhook-timestamp',
          'When this attempt was signed, in seconds since the Unix epoch. Reject old ones to stop replays.',
          '1767268800',
        ),
        header(
          'webhook-signature',
          'Space-separated signatures, each `v1,<base64 HMAC-SHA256>` (see above).',
          'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
        ),
        header(EVENT_TYPE_HEADER, `The event type: \`${e.type}\`.`, e.type),
      ],
      requestBody: {
        required: true,
        description: 'The event, as JSON (UTF-8).',
        content: { 'application/json': { schema: { $ref: `#/components/schemas/${e.schema}` }, example: e.example } },
      },
      responses: {
        '2XX': {
          description: `Acknowledged: the delivery is done. Must arrive within ${settings.timeoutMs / 1000} s; the body is ignored.`,
        },
        default: { description: 'Not acknowledged: the delivery is retried on the schedule above.' },
      },
    },
  });
  return Object.fromEntries(EVENTS.map((e) => [e.type, event(e)]));
}
