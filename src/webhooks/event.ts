/**
 * The `plant.created` event: its id and the exact JSON text subscribers receive.
 *
 * The payload is the plant as a `NewPlant`, written by hand so the int64 id keeps
 * every digit: a bigint's decimal text is a valid JSON number, whereas passing it
 * through a JS number would round anything above 2^53. Names and tags are strings,
 * for which JSON.stringify is exact.
 *
 * Pure and dependency-free, so a store can call it wherever its writes run
 * (including a worker thread).
 */
import { randomBytes } from 'node:crypto';
import type { PlantCreatedEvent, PlantRecord } from '../store/types.js';

export const PLANT_CREATED = 'plant.created';

/** msg_ + 128 random bits: the Standard Webhooks message id (webhook-id). */
export function newEventId(): string {
  return `msg_${randomBytes(16).toString('base64url')}`;
}

export function newPlantJson(plant: PlantRecord): string {
  const tag = plant.tag === undefined ? '' : `,"tag":${JSON.stringify(plant.tag)}`;
  return `{"id":${plant.id.toString()},"name":${JSON.stringify(plant.name)}${tag}}`;
}

export function plantCreatedEvent(plant: PlantRecord): PlantCreatedEvent {
  return { id: newEventId(), type: PLANT_CREATED, payload: newPlantJson(plant) };
}
