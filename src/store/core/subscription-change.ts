/**
 * A subscription after a PATCH, computed the same way by both stores (each under its own lock). The version
 * goes up only when something changed, like a plant's, so a PATCH that changes nothing keeps the ETag.
 */
import type { SubscriptionChange, WebhookSubscription } from '../webhook-types.js';

/** The reason recorded when a change disables a subscription without giving one. */
export const DISABLED_BY_HAND = 'disabled by hand';

export function applySubscriptionChange(
  current: WebhookSubscription,
  change: SubscriptionChange,
  now: Date,
): WebhookSubscription {
  const enabled = change.enabled ?? current.enabled;
  const description = change.description === undefined ? current.description : (change.description ?? undefined);
  const tag = change.tag === undefined ? current.tag : (change.tag ?? undefined);
  const maxPerSecond = change.maxPerSecond === undefined ? current.maxPerSecond : (change.maxPerSecond ?? undefined);
  // Disabling keeps the first time and reason; enabling clears them.
  const disabled =
    enabled || !current.enabled
      ? { disabledAt: current.disabledAt, disabledReason: current.disabledReason }
      : { disabledAt: now, disabledReason: change.disabledReason ?? DISABLED_BY_HAND };
  const next: WebhookSubscription = {
    id: current.id,
    url: change.url ?? current.url,
    eventTypes: change.eventTypes ?? current.eventTypes,
    createdAt: current.createdAt,
    version: current.version,
    enabled,
    ...(description === undefined ? {} : { description }),
    ...(tag === undefined ? {} : { tag }),
    ...(enabled || disabled.disabledAt === undefined ? {} : { disabledAt: disabled.disabledAt }),
    ...(enabled || disabled.disabledReason === undefined ? {} : { disabledReason: disabled.disabledReason }),
    ...(maxPerSecond === undefined ? {} : { maxPerSecond }),
  };
  const changed =
    next.url !== current.url ||
    next.description !== current.description ||
    next.tag !== current.tag ||
    next.enabled !== current.enabled ||
    next.maxPerSecond !== current.maxPerSecond ||
    next.eventTypes.join(',') !== current.eventTypes.join(',');
  return changed ? { ...next, version: current.version + 1 } : current;
}

/** Whether `expected` (from If-Match) accepts the subscription's version. */
export function versionAccepted(expected: 'any' | readonly number[] | undefined, version: number): boolean {
  return expected === undefined || expected === 'any' || expected.includes(version);
}
