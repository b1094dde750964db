/**
 * The plant events and the exact JSON text subscribers receive (the payload is plant-json.ts's).
 * Dependency-free, so a store can build them wherever its writes run, a worker thread included.
 */
import { randomBytes } from 'node:crypto';
import type { PlantRecord } from './plant.js';
import { deletedPlantJson, plantJson } from './plant-json.js';

export const PLANT_CREATED = 'plant.created';
export const PLANT_UPDATED = 'plant.updated';
export const PLANT_DELETED = 'plant.deleted';
/** An operational event, about a subscription rather than a plant: one was disabled automatically. */
export const WEBHOOK_DISABLED = 'webhook.disabled';

/** The events about a plant: the ones a tag filter applies to, and what a change stream gives without `types`. */
export const PLANT_EVENT_TYPES = [PLANT_CREATED, PLANT_UPDATED, PLANT_DELETED] as const;

/** Every event type there is; what a subscriber can be sent. */
export const EVENT_TYPES = [...PLANT_EVENT_TYPES, WEBHOOK_DISABLED] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export function isEventType(text: string): text is EventType {
  return (EVENT_TYPES as readonly string[]).includes(text);
}

export function isPlantEventType(type: EventType): boolean {
  return type !== WEBHOOK_DISABLED;
}

/** The outbox row of one event, written in its change's transaction; none for a replay, no-op or failed write. */
export interface PlantEvent {
  /** msg_...: the webhook-id every delivery of this event carries, on every attempt. */
  readonly id: string;
  readonly type: EventType;
  /** The exact JSON text that is sent (int64 id written digit for digit). */
  readonly payload: string;
}

/** What a plant event says of its plant, for the delivery log: its id, and its name unless it was deleted. */
export interface EventPlant {
  readonly id: bigint;
  readonly name?: string;
}

/** Every plant event's payload is plantJson's (or deletedPlantJson's) text, which starts with the id's exact digits. */
const LEADING_ID = /^\{"id":(-?\d+)[,}]/;

/**
 * The plant an event is about, read from its payload; undefined for an event not about a plant. The name is read
 * with JSON.parse, which rounds the id: the id comes from its digits.
 */
export function plantOfEvent(type: string, payload: string): EventPlant | undefined {
  if (!isEventType(type) || !isPlantEventType(type)) return undefined;
  const digits = LEADING_ID.exec(payload)?.[1];
  if (digits === undefined) return undefined;
  const { name } = JSON.parse(payload) as { name?: unknown };
  return { id: BigInt(digits), ...(typeof name === 'string' ? { name } : {}) };
}

/** The event of a newly created plant: the plant as a `NewPlant`. */
export type PlantCreatedEvent = PlantEvent & { readonly type: typeof PLANT_CREATED };

/** msg_ + 128 random bits: the Standard Webhooks message id (webhook-id). */
export function newEventId(): string {
  return `msg_${randomBytes(16).toString('base64url')}`;
}

/** `count` new event ids, from one call for random bytes: a call per id cost more than the rest of making it. */
export function newEventIds(count: number): string[] {
  const bytes = randomBytes(16 * count);
  return Array.from({ length: count }, (_, i) => `msg_${bytes.toString('base64url', 16 * i, 16 * i + 16)}`);
}

export function plantCreatedEvent(plant: PlantRecord): PlantCreatedEvent {
  return { id: newEventId(), type: PLANT_CREATED, payload: plantJson(plant) };
}

/** A plant changed: the plant as it is after the change. */
export function plantUpdatedEvent(plant: PlantRecord): PlantEvent {
  return { id: newEventId(), type: PLANT_UPDATED, payload: plantJson(plant) };
}

/** A plant was deleted: its id. */
export function plantDeletedEvent(id: bigint): PlantEvent {
  return { id: newEventId(), type: PLANT_DELETED, payload: deletedPlantJson(id) };
}

/** What a webhook.disabled event says of the subscription that was disabled. */
export interface DisabledSubscription {
  readonly id: string;
  readonly url: string;
  readonly disabledAt?: Date;
  readonly disabledReason?: string;
}

/** A subscription was disabled automatically: its id, url, and when and why (the times as RFC 3339, in UTC). */
export function webhookDisabledEvent(subscription: DisabledSubscription): PlantEvent {
  const { id, url, disabledAt, disabledReason } = subscription;
  const payload = JSON.stringify({ id, url, disabledAt: disabledAt?.toISOString(), disabledReason });
  return { id: newEventId(), type: WEBHOOK_DISABLED, payload };
}
