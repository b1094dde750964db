/**
 * Creating a subscription (route and CLI). The secret is stored, since every delivery is
 * signed with it, but shown only once.
 */
import { randomBytes } from 'node:crypto';
import { EVENT_TYPES, PLANT_CREATED, type EventType } from '../domain/events.js';
import type { NewWebhookSubscription, WebhookStore, WebhookSubscription } from '../store/types.js';
import { CONTROL_CHARACTER, UNPAIRED_SURROGATE } from '../domain/text-rules.js';
import { PLANT_TEXT_RULES } from '../domain/plant.js';
import { checkWebhookUrl, type UrlPolicy } from './url-policy.js';

export const DESCRIPTION_MAX_LENGTH = 500;

/** The highest throttle: above it a limit protects no receiver (one instance sends far fewer than this). */
export const MAX_PER_SECOND_LIMIT = 10_000;

/** A subscription request the HTTP schema would have refused (from callers without one: the CLI). */
export class WebhookInputError extends Error {}

export interface SubscriptionRequest {
  readonly url: string;
  readonly description?: string;
  /** Which events it receives; plant.created alone by default (what every subscription received before types could be
   * chosen). */
  readonly eventTypes?: readonly EventType[];
  /** Only events of plants with this tag after the change or before it. */
  readonly tag?: string;
  /** At most this many deliveries started per second; unlimited when left out. */
  readonly maxPerSecond?: number;
}

export const DEFAULT_EVENT_TYPES: readonly EventType[] = [PLANT_CREATED];

/** whsec_ + base64 of 256 random bits: the Standard Webhooks secret format. */
export function generateSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export function generateSubscriptionId(): string {
  return `whk_${randomBytes(12).toString('hex')}`;
}

/** The checks the HTTP schema makes, for callers without one (the CLI). */
export function checkDescription(description: string): void {
  if (
    description.length === 0 ||
    [...description].length > DESCRIPTION_MAX_LENGTH ||
    CONTROL_CHARACTER.test(description)
  ) {
    throw new WebhookInputError(
      `description must be 1 to ${DESCRIPTION_MAX_LENGTH} characters without control characters`,
    );
  }
}

/** A tag filter's checks (a plant tag's rules), for callers without a schema (the CLI). */
export function checkTagFilter(tag: string): void {
  const { minLength, maxLength } = PLANT_TEXT_RULES.tag;
  const length = [...tag].length;
  if (length < minLength || length > maxLength || CONTROL_CHARACTER.test(tag) || UNPAIRED_SURROGATE.test(tag)) {
    throw new WebhookInputError(`tag must be ${minLength} to ${maxLength} characters without control characters`);
  }
}

/** maxPerSecond as the HTTP schema checks it, for callers without one (the CLI). */
export function checkMaxPerSecond(value: number): void {
  if (!Number.isInteger(value) || value < 1 || value > MAX_PER_SECOND_LIMIT)
    throw new WebhookInputError(`max-per-second must be a whole number from 1 to ${MAX_PER_SECOND_LIMIT}`);
}

export async function createSubscription(
  store: WebhookStore,
  request: SubscriptionRequest,
  policy: UrlPolicy,
  now = new Date(),
): Promise<WebhookSubscription & NewWebhookSubscription> {
  const url = await checkWebhookUrl(request.url, policy);
  if (request.description !== undefined) checkDescription(request.description);
  if (request.tag !== undefined) checkTagFilter(request.tag);
  if (request.maxPerSecond !== undefined) checkMaxPerSecond(request.maxPerSecond);
  const subscription: NewWebhookSubscription = {
    id: generateSubscriptionId(),
    // The URL as it will be called, so that what is listed is what is delivered to.
    url: url.href,
    ...(request.description === undefined ? {} : { description: request.description }),
    ...(request.tag === undefined ? {} : { tag: request.tag }),
    // Each type once, in the catalogue's order, whatever order they were asked in.
    eventTypes: EVENT_TYPES.filter((type) => (request.eventTypes ?? DEFAULT_EVENT_TYPES).includes(type)),
    secret: generateSigningSecret(),
    createdAt: now,
    ...(request.maxPerSecond === undefined ? {} : { maxPerSecond: request.maxPerSecond }),
  };
  await store.insertSubscription(subscription);
  return { ...subscription, version: 1, enabled: true };
}
