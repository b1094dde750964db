/**
 * The webhook shapes, as JSON Schema: validation, serialisation and the OpenAPI
 * document all come from these objects.
 */
import { MAX_WEBHOOK_URL_LENGTH, WEBHOOK_URL_PATTERN } from './url-policy.js';
import { DESCRIPTION_MAX_LENGTH, MAX_PER_SECOND_LIMIT } from './subscriptions.js';
import { PRINTABLE_TEXT } from '../domain/text-rules.js';
import { DEFAULT_OVERLAP_SECONDS, MAX_OVERLAP_SECONDS } from './secret-rotation.js';
import { EVENT_TYPES } from '../domain/events.js';
import { Int64Id, PlantTag } from '../plants/schemas.js';

const DateTime = { type: 'string', format: 'date-time' } as const;

const Url = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_WEBHOOK_URL_LENGTH,
  description:
    'Where events are POSTed: an absolute http or https URL, without credentials, #fragment, spaces or control characters. Its host must resolve ' +
    'only to public addresses (loopback, private, link-local and reserved ranges are refused unless the service runs ' +
    'with WEBHOOK_ALLOW_PRIVATE_URLS=true); this is checked now and again at every delivery.',
  example: 'https://example.com/hooks/plants',
} as const;

/**
 * A URL a request gives: the same, with its shape as a pattern, so a URL the schema accepts is one the service
 * accepts, but for where its host resolves (the SSRF policy, said in the description). Served URLs keep no pattern:
 * one kept from before it is still shown.
 */
const NewUrl = {
  ...Url,
  pattern: WEBHOOK_URL_PATTERN,
  description:
    `${Url.description} Its shape is the pattern's: http(s)://host[:port][/path][?query], the host a name of ASCII ` +
    'letters, digits, - and _ (an internationalised name in its xn-- form), a dotted IPv4 address or a bracketed ' +
    'IPv6 one, the port 1 to 65535. A URL of another shape is refused with INVALID_WEBHOOK_URL saying why.',
} as const;

const Description = {
  type: 'string',
  minLength: 1,
  maxLength: DESCRIPTION_MAX_LENGTH,
  pattern: PRINTABLE_TEXT,
  description: `What the subscription is for: 1 to ${DESCRIPTION_MAX_LENGTH} characters, no control characters. Omitted when none was given.`,
  example: 'inventory sync',
} as const;

const EventTypes = {
  type: 'array',
  items: { type: 'string', enum: EVENT_TYPES },
  minItems: 1,
  uniqueItems: true,
  description: `The event types the subscription receives: any of ${EVENT_TYPES.join(', ')}.`,
  example: ['plant.created', 'plant.updated', 'plant.deleted'],
} as const;

const TAG_FILTER =
  'Plant events (plant.created, plant.updated, plant.deleted) only of plants with this tag after the change or before it: ' +
  'a change into the tag, out of it (the plant had it) or within it, and the deletion of a plant that had it. The same rules ' +
  'as the `tag` of `GET /events`. Other events (webhook.disabled) are not filtered.';

const Tag = {
  ...PlantTag,
  description: `${TAG_FILTER} Omitted when the subscription takes every plant.`,
  example: 'houseplant',
} as const;

const MaxPerSecond = {
  type: 'integer',
  minimum: 1,
  maximum: MAX_PER_SECOND_LIMIT,
  description:
    `A throttle: at most this many deliveries to this subscription are started in any one second, by all instances ` +
    `together (1 to ${MAX_PER_SECOND_LIMIT}). Deliveries beyond the rate wait, pending, and are sent later: none is ` +
    'dropped, and waiting is not a failed attempt (it never leads to automatic disabling).',
  example: 50,
} as const;

const SubscriptionId = {
  type: 'string',
  description: 'The subscription id (whk_...).',
  example: 'whk_3f1c0e9a7b2d4c5e6f708192',
} as const;

export const NewWebhookSubscription = {
  $id: 'NewWebhookSubscription',
  type: 'object',
  required: ['url'],
  properties: {
    url: NewUrl,
    description: Description,
    eventTypes: { ...EventTypes, description: `${EventTypes.description} Default: plant.created only.` },
    tag: { ...Tag, type: ['string', 'null'], description: `${TAG_FILTER} Left out or null: every plant.` },
    maxPerSecond: {
      ...MaxPerSecond,
      type: ['integer', 'null'],
      description: `${MaxPerSecond.description} Left out or null: no limit.`,
    },
  },
  description: 'A subscription to create. Properties not listed here are ignored.',
} as const;

const Enabled = {
  type: 'boolean',
  description:
    'Whether events are sent. A disabled subscription keeps receiving its events in the outbox (finished ones are kept ' +
    'for WEBHOOK_RETENTION_DAYS, pending ones until sent); they are sent, oldest due first, once it is enabled again.',
} as const;

export const WebhookSubscription = {
  $id: 'WebhookSubscription',
  type: 'object',
  required: ['id', 'url', 'eventTypes', 'enabled', 'createdAt'],
  properties: {
    id: SubscriptionId,
    url: Url,
    description: Description,
    eventTypes: EventTypes,
    tag: Tag,
    enabled: Enabled,
    maxPerSecond: { ...MaxPerSecond, description: `${MaxPerSecond.description} Omitted when there is no limit.` },
    disabledAt: { ...DateTime, description: 'When it was disabled; only while disabled.' },
    disabledReason: {
      type: 'string',
      description:
        'Why it was disabled (`disabled by hand`, or the reason sent with `enabled: false`); only while disabled.',
    },
    createdAt: DateTime,
  },
  additionalProperties: false,
  description:
    'A webhook subscription: every event of its types is POSTed to its url. The signing secret is not shown.',
} as const;

export const CreatedWebhookSubscription = {
  $id: 'CreatedWebhookSubscription',
  type: 'object',
  required: ['id', 'url', 'eventTypes', 'enabled', 'secret', 'createdAt'],
  properties: {
    ...WebhookSubscription.properties,
    secret: {
      type: 'string',
      pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
      description:
        'The signing secret (Standard Webhooks format: whsec_ + base64 key). Shown only in this response: keep it to verify ' +
        'the webhook-signature header of every delivery.',
      example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    },
  },
  additionalProperties: false,
  description: 'The new subscription, with its signing secret (shown only here).',
} as const;

export const WebhookSubscriptionPatch = {
  $id: 'WebhookSubscriptionPatch',
  type: 'object',
  properties: {
    url: { ...NewUrl, description: `A new URL, under the same rules: ${NewUrl.description}` },
    description: {
      ...Description,
      type: ['string', 'null'],
      description: `A new description (1 to ${DESCRIPTION_MAX_LENGTH} characters, no control characters), or null to remove it.`,
    },
    eventTypes: {
      ...EventTypes,
      description: `${EventTypes.description} Events written before the change keep their deliveries.`,
    },
    tag: {
      ...Tag,
      type: ['string', 'null'],
      description: `A new tag filter, or null to remove it (every plant). ${TAG_FILTER} It applies to events written from then on.`,
    },
    enabled: {
      ...Enabled,
      description: `false disables the subscription, true enables it again. ${Enabled.description}`,
    },
    disabledReason: {
      type: 'string',
      minLength: 1,
      maxLength: DESCRIPTION_MAX_LENGTH,
      pattern: PRINTABLE_TEXT,
      description: 'Recorded as disabledReason when this patch disables the subscription (default `disabled by hand`).',
    },
    maxPerSecond: {
      ...MaxPerSecond,
      type: ['integer', 'null'],
      description: `A new throttle, or null to remove it. ${MaxPerSecond.description} A new rate applies from the next claim.`,
    },
  },
  description:
    'A JSON Merge Patch (RFC 7396) of a subscription: the properties sent are changed, the others kept. `"description": null` ' +
    'removes the description. Properties not listed here are ignored.',
} as const;

/**
 * The rotate-secret body. `null` is allowed because Fastify validates a request sent
 * without a body as null: the body is optional, and leaving it out means the defaults.
 */
export const RotateWebhookSecret = {
  $id: 'RotateWebhookSecret',
  type: ['object', 'null'],
  properties: {
    overlapSeconds: {
      type: 'integer',
      format: 'int32',
      minimum: 0,
      maximum: MAX_OVERLAP_SECONDS,
      // The default is stated in words, not as `default`: the generated client types
      // would then make the property required.
      description:
        `How long the previous secret keeps signing deliveries, beside the new one: 0 to ${MAX_OVERLAP_SECONDS} seconds (7 days), ` +
        `default ${DEFAULT_OVERLAP_SECONDS} (24 h). 0 stops it at once.`,
      example: 3600,
    },
  },
  description:
    'Optional: the body may be left out (with no Content-Type) or be null, and then the defaults apply. Properties not listed here are ignored.',
} as const;

export const RotatedWebhookSubscription = {
  $id: 'RotatedWebhookSubscription',
  type: 'object',
  required: ['id', 'url', 'eventTypes', 'enabled', 'secret', 'createdAt'],
  properties: {
    ...WebhookSubscription.properties,
    secret: {
      ...CreatedWebhookSubscription.properties.secret,
      description:
        'The new signing secret (whsec_ + base64 key). Shown only in this response: give it to the receiver. Every delivery ' +
        'is signed with it from now on.',
    },
    previousSecretExpiresAt: {
      ...DateTime,
      description:
        'Until when deliveries are also signed with the previous secret (a second signature in webhook-signature), so the ' +
        'receiver can switch without refusing any. Absent when the previous secret stopped at once (overlapSeconds 0).',
    },
  },
  additionalProperties: false,
  description: 'The subscription, with its new signing secret (shown only here).',
} as const;

export const DeliveryAttempt = {
  $id: 'WebhookDeliveryAttempt',
  type: 'object',
  required: ['attempt', 'attemptedAt', 'latencyMs'],
  properties: {
    attempt: {
      type: 'integer',
      minimum: 1,
      description:
        'Which attempt this was (an attempt interrupted by a shutdown is logged and repeated with the same number).',
    },
    attemptedAt: DateTime,
    responseStatus: { type: 'integer', description: "The subscriber's HTTP status; absent when no response came." },
    latencyMs: {
      type: 'number',
      description: 'Whole milliseconds from sending to the response status (or to the failure).',
    },
    error: {
      type: 'string',
      description:
        'Why the attempt did not acknowledge (timeout, refused connection, non-2xx status...); absent on success.',
    },
    responseBody: {
      type: 'string',
      description:
        'The first 1 KiB of the response body as sent (not decompressed), decoded as UTF-8: bytes that are not ' +
        'UTF-8, and NUL, read as U+FFFD. Empty when it had none; absent when no response came.',
    },
    responseContentType: { type: 'string', description: "The response's Content-Type, when it had one." },
  },
  additionalProperties: false,
} as const;

export const WebhookDelivery = {
  $id: 'WebhookDelivery',
  type: 'object',
  required: ['id', 'eventId', 'eventType', 'status', 'attemptCount', 'createdAt', 'attempts'],
  properties: {
    id: { type: 'string', description: 'The delivery id (dlv_...).' },
    eventId: { type: 'string', description: 'The event id, sent as the webhook-id header on every attempt (msg_...).' },
    eventType: { type: 'string', enum: EVENT_TYPES },
    status: {
      type: 'string',
      enum: ['pending', 'succeeded', 'failed'],
      description:
        'pending: waiting for its next attempt; succeeded: a 2xx was received; failed: the retry schedule is exhausted.',
    },
    attemptCount: { type: 'integer', minimum: 0, description: 'Attempts made so far.' },
    nextAttemptAt: { ...DateTime, description: 'When the next attempt is due; only while pending.' },
    createdAt: DateTime,
    plantId: {
      ...Int64Id,
      description:
        'The plant the event is about (an int64, every digit exact), as in the event; omitted for an event not about ' +
        'a plant (webhook.disabled).',
    },
    plantName: {
      type: 'string',
      description: "The plant's name as the event carried it; omitted for plant.deleted (whose event has the id only).",
    },
    attempts: { type: 'array', items: { $ref: 'WebhookDeliveryAttempt' }, description: 'Every attempt, oldest first.' },
  },
  additionalProperties: false,
  description: 'One event sent to one subscription, with its attempts.',
} as const;

/**
 * An RFC 3339 time as a request gives it (checked where it is read: the validator has no formats). No example: a
 * recovery's window must be recent (within WEBHOOK_RETENTION_DAYS), so any fixed date would expire.
 */
const Timestamp = { type: 'string', minLength: 1, maxLength: 64 } as const;

export const RecoverWebhook = {
  $id: 'RecoverWebhook',
  type: 'object',
  required: ['since'],
  properties: {
    since: {
      ...Timestamp,
      description:
        'Re-queue the failed deliveries of events created from this time on: an RFC 3339 date-time with its offset ' +
        '(YYYY-MM-DDThh:mm:ssZ, e.g. the start of an outage a few hours ago). At most WEBHOOK_RETENTION_DAYS ago ' +
        '(30 by default): older ones are deleted.',
    },
    until: { ...Timestamp, description: 'And created before this time (RFC 3339; not in the future); default: now.' },
  },
  description: 'The window of a recovery. Properties not listed here are ignored.',
} as const;

export const WebhookRecovery = {
  $id: 'WebhookRecovery',
  type: 'object',
  required: ['id', 'subscriptionId', 'since', 'until', 'status', 'requeued', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string', description: 'The recovery id (rcv_...).' },
    subscriptionId: SubscriptionId,
    since: DateTime,
    until: { ...DateTime, description: 'The end of the window (the time of the request when none was given).' },
    status: {
      type: 'string',
      enum: ['running', 'done'],
      description:
        'running: deliveries are being re-queued, in batches; done: every delivery of the window was looked at.',
    },
    requeued: { type: 'integer', minimum: 0, description: 'Failed deliveries made pending again so far.' },
    createdAt: DateTime,
    updatedAt: { ...DateTime, description: 'When its last batch ran.' },
    finishedAt: { ...DateTime, description: 'When it was done; only once done.' },
  },
  additionalProperties: false,
  description: 'A recovery: the failed deliveries of a window re-queued in the background.',
} as const;
